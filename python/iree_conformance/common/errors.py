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
configuration" in every tool. ``EXIT_CODES`` below is the table in code; the docs copy it
and tests/core/test_exit_codes.py checks that no two kinds share a number.

====  ======================  =========================================================
code  class                   meaning
====  ======================  =========================================================
2     ConfigurationError      bad arguments, targets file, shard spec, results file;
                              cache-tools' bad arguments, config or paths
                              (``CacheToolsError``)
3     ManifestError           a broken expectations manifest (or other TOML input)
4     CorpusError             a suite's cases are missing or under their floor
5     BundleError             a bundle is incomplete, tampered or from another IREE
6     (cache-tools audit)     ``cache-tools audit --fail-over`` tripped
7     ApiError (cache_tools)  the GitHub API failed or answered nonsense
8     CIError (ci/_common)    a ci/ script met a problem the user can fix
9     EnvironmentBuildError   a per-version environment could not be made (network
                              failure, install failure; ``iree-conformance versions``)
====  ======================  =========================================================
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
    "EXIT_THRESHOLD",
    "BundleError",
    "ConfigurationError",
    "ConformanceError",
    "CorpusError",
    "EnvironmentBuildError",
    "ManifestError",
    "run_cli",
]

EXIT_CONFIGURATION = 2
EXIT_MANIFEST = 3
EXIT_CORPUS = 4
EXIT_BUNDLE = 5
EXIT_THRESHOLD = 6  # cache-tools audit --fail-over
EXIT_API = 7  # cache-tools: the GitHub API
EXIT_CI = 8  # ci/ scripts: CIError
EXIT_ENVIRONMENT = 9  # iree-conformance versions/bisect: an environment could not be made

# Every error kind of every CLI, by name, with its exit status (0 and 1 are not errors).
EXIT_CODES: dict[str, int] = {
    "configuration": EXIT_CONFIGURATION,
    "manifest": EXIT_MANIFEST,
    "corpus": EXIT_CORPUS,
    "bundle": EXIT_BUNDLE,
    "threshold": EXIT_THRESHOLD,
    "api": EXIT_API,
    "ci": EXIT_CI,
    "environment": EXIT_ENVIRONMENT,
}


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
