"""The one error base of the project, with the exit status each kind of error means.

Every expected failure (a user can fix it: a broken manifest, an unknown target, a
corpus under its floor, a bundle from another IREE version) is a ``ConformanceError``.
Its message names the file and line (or the thing) at fault and the next step; a
command-line entry point catches the base class once, prints ``error: <message>``
without a traceback and exits with ``return_code``. cache_tools (``CacheToolsError``)
and the ci/ scripts (``CIError``) derive their bases from this one.

Standard library only: ci/ scripts import it from the source tree before any install.

Exit statuses: ONE table for every command-line tool of the project (``iree-conformance``,
``cache-tools`` and the ci/ scripts), so that a number means one thing wherever it comes
from. 0 and 1 keep their usual meaning (success, and "tests failed" or "findings"); 2 is
also what argparse exits with on a usage error, so it stays "bad arguments or
configuration" in every tool. ``EXIT_CODES`` below is the table in code and ``EXIT_TABLE``
its meanings: docs/commands.md's table (``python -m iree_conformance.cli.options_table``) and the
commands' help texts (``exit_help``) are generated from them, and
tests/unit/core/test_exit_codes.py checks that no two kinds share a number. cache-tools, its own
distribution, keeps a copy of its three numbers that the tests check against this one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

__all__ = [
    "EXIT_API",
    "EXIT_BUNDLE",
    "EXIT_CI",
    "EXIT_CODES",
    "EXIT_CONFIGURATION",
    "EXIT_CORPUS",
    "EXIT_ENVIRONMENT",
    "EXIT_MANIFEST",
    "EXIT_TABLE",
    "EXIT_THRESHOLD",
    "EXIT_UNJUDGED",
    "BundleError",
    "ConfigurationError",
    "ConformanceError",
    "CorpusError",
    "EnvironmentBuildError",
    "ManifestError",
    "exit_help",
    "run_cli",
]

EXIT_CONFIGURATION = 2
EXIT_MANIFEST = 3
EXIT_CORPUS = 4
EXIT_BUNDLE = 5
EXIT_THRESHOLD = 6  # cache-tools audit --fail-over
EXIT_API = 7  # cache-tools: the GitHub API
EXIT_CI = 8  # python -m ci (ci/): CIError
EXIT_UNJUDGED = 9  # check-model: the harness cannot judge the model
EXIT_ENVIRONMENT = 10  # iree-conformance versions/bisect: an environment could not be made

# Every error kind of every CLI, by name, with its exit status (0 and 1 are not errors).
EXIT_CODES: dict[str, int] = {
    "configuration": EXIT_CONFIGURATION,
    "manifest": EXIT_MANIFEST,
    "corpus": EXIT_CORPUS,
    "bundle": EXIT_BUNDLE,
    "threshold": EXIT_THRESHOLD,
    "api": EXIT_API,
    "ci": EXIT_CI,
    "unjudged": EXIT_UNJUDGED,
    "environment": EXIT_ENVIRONMENT,
}

# Every status with what it means, for docs/commands.md's table and the help texts.
EXIT_TABLE: tuple[tuple[int, str], ...] = (
    (0, "done"),
    (1, "failures found (a flaky case for `flakes`, a missed target for a check)"),
    (
        EXIT_CONFIGURATION,
        "bad arguments, targets file, shard spec, results file, cache-tools config or path",
    ),
    (
        EXIT_MANIFEST,
        "a broken expectations manifest or TOML file (the message names file and line)",
    ),
    (EXIT_CORPUS, "a suite's cases missing or under their floor"),
    (EXIT_BUNDLE, "a bundle that is incomplete, tampered with or from another IREE version"),
    (EXIT_THRESHOLD, "`cache-tools audit --fail-over` tripped"),
    (EXIT_API, "`cache-tools`: the GitHub API failed or answered nonsense"),
    (
        EXIT_CI,
        "a `python -m ci` command met a problem you can fix (`CIError`; the message says what)",
    ),
    (
        EXIT_UNJUDGED,
        "`check-model`: the harness cannot judge the model (no usable reference, or a skip; "
        "the message says what to specify); `repro`: the case is skipped here or fails in the harness, not in IREE",
    ),
    (
        EXIT_ENVIRONMENT,
        "`versions`/`bisect`: a per-version environment could not be made (network, install; "
        "nothing half-made is kept), or it cannot load IREE (the folder to delete is named)",
    ),
)


def exit_help(own: dict[int, str], *codes: int) -> str:
    """A command's 'Exit status: ...' help text: its own meanings of 0 and 1 (``own``),
    then the table's meaning of each of ``codes``, so no help text copies a number."""
    meanings = dict(EXIT_TABLE)
    parts = [f"{code} {text}" for code, text in own.items()]
    parts += [f"{code} {meanings[code].replace('`', '')}" for code in codes]
    return "Exit status: " + "; ".join(parts) + "."


class ConformanceError(Exception):
    """Base class: an expected failure with a message that says what to do next."""

    return_code: int = EXIT_CONFIGURATION

    @property
    def exit_code(self) -> int:  # cache_tools' older name
        return self.return_code


class ConfigurationError(ConformanceError):
    """Bad arguments or configuration: options, targets.toml, a shard spec, a results file."""

    return_code = EXIT_CONFIGURATION


class ManifestError(ConformanceError):
    """An expectations manifest (or another TOML input) that cannot be read; names file:line."""

    return_code = EXIT_MANIFEST


class CorpusError(ConformanceError):
    """A suite's cases are missing, malformed or fewer than the suite's floor."""

    return_code = EXIT_CORPUS


class BundleError(ConformanceError):
    """A bundle that cannot be run here: incomplete, tampered, another IREE version, no driver."""

    return_code = EXIT_BUNDLE


class EnvironmentBuildError(ConformanceError):
    """A per-version environment could not be made (network failure, failed install);
    nothing half-made is kept."""

    return_code = EXIT_ENVIRONMENT


def run_cli(main: Callable[[], int], prog: str, stderr: TextIO | None = None) -> int:
    """Calls main(); a ConformanceError becomes ``<prog>: error: <message>`` and its code."""
    try:
        return int(main() or 0)
    except ConformanceError as exc:
        print(f"{prog}: error: {exc}", file=stderr or sys.stderr)
        return exc.return_code
