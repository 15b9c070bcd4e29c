"""Helpers shared by the commands of ci/: GitHub Actions file commands, platform names,
sizes and results-JSON loading.

Standard library only: these scripts run before the project is installed (install.py,
setup_env.py) and on every runner OS, so nothing here may assume bash, symlinks or a
particular line ending. The policies the library already implements are not copied
here: the error base (``iree_conformance.common.errors``), TOML reading (``tomlio``), atomic
writes (``fsutil``) and the GitHub Actions file commands (``ghactions``) come from the
library, and sizes from ``cache_tools/units.py``; all of those are standard library only.
Nothing here edits ``sys.path``: the commands run as ``python -m ci COMMAND`` from the
repository root (so ``ci`` and ``cache_tools`` import from there), and a step that runs
before the project is installed gets the source tree's ``python/`` folder on
``PYTHONPATH`` from its workflow job (docs/ci-commands.md, "How ci/ imports the library").
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

try:
    import iree_conformance  # noqa: F401 - the check below; the names come next
except ModuleNotFoundError as _exc:
    if _exc.name != "iree_conformance":
        raise
    print(
        "error: python -m ci imports the library (iree_conformance): run it from the "
        "repository root with the project installed, or before the install with "
        "PYTHONPATH=python (docs/ci-commands.md, 'How ci/ imports the library')",
        file=sys.stderr,
    )
    raise SystemExit(8) from None  # EXIT_CI, which is the library's

from cache_tools.errors import CacheToolsError
from cache_tools.units import parse_size as _parse_size
from iree_conformance.common import ghactions
from iree_conformance.common.errors import EXIT_CI, ConformanceError
from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.model import results
from iree_conformance.report import annotations as gh_annotations
from iree_conformance.report.tables import md_code as _md_code
from iree_conformance.report.tables import md_text


def _refuse_a_module_as_entry_point() -> None:
    """`python -m ci.run_shard` (the entry points before ci/cli.py) would import the
    module and exit 0 having done nothing, a green CI step; it is a usage error instead."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = getattr(spec, "name", None) or ""
    if name.startswith("ci.") and name not in ("ci.__main__", "ci.cli"):
        print(
            f"error: python -m {name} is not an entry point: run `python -m ci COMMAND` "
            "(python -m ci --help lists the commands)",
            file=sys.stderr,
        )
        raise SystemExit(2)


_refuse_a_module_as_entry_point()

REPO_ROOT = Path(__file__).resolve().parent.parent

OS_NAMES = ("linux", "macos", "windows")
RESULTS_SCHEMA = results.SCHEMA


class CIError(ConformanceError):
    """A problem the user can fix; commands print it without a traceback and exit
    ``EXIT_CI`` (8, from the project's one table in ``iree_conformance.common.errors``)."""

    return_code = EXIT_CI


def run_main(main, argv: list[str] | None = None) -> int:
    """Calls main(argv), turning any ConformanceError (CIError, a manifest's error from the
    library) or CacheToolsError (cache-tools' config, met by the source build) into a
    one-line message and its exit status (the two share the one table's numbers)."""
    try:
        return int(main(argv) or 0)
    except (ConformanceError, CacheToolsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.return_code


def load_toml(path: Path) -> dict[str, Any]:
    """A TOML file through the library's one reader (``iree_conformance.common.tomlio``)."""
    try:
        from iree_conformance.common import tomlio
    except ModuleNotFoundError as exc:  # Python 3.10 without tomli
        raise CIError(str(exc)) from None
    try:
        return tomlio.load_toml(path)
    except tomlio.TomlError as exc:
        raise CIError(str(exc)) from None


# -- GitHub Actions file commands (iree_conformance.common.ghactions) ----------------------------


def set_outputs(values: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """Appends step outputs to $GITHUB_OUTPUT (multi-line values use a random delimiter).

    Lists become one item per line, booleans true/false. Returns False when not on Actions.
    """
    return ghactions.write_outputs({k: _text(v) for k, v in values.items()}, env)


def set_env(values: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """Appends variables for the following steps to $GITHUB_ENV."""
    return ghactions.write_env({k: _text(v) for k, v in values.items()}, env)


def write_report(
    payload: Any, markdown: str, output: str | None, markdown_path: str | None, summary: bool
) -> None:
    """The JSON to --output, the Markdown to --markdown (else stdout), and to the step
    summary with --summary: the output contract shared by the results scripts."""
    if output:
        atomic_write_text(output, json.dumps(payload, indent=1) + "\n")
    if markdown_path:
        atomic_write_text(markdown_path, markdown)
    if summary:
        append_summary(markdown)
    if not markdown_path:
        sys.stdout.write(markdown)


def append_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    """Appends Markdown to the job's step summary ($GITHUB_STEP_SUMMARY)."""
    return ghactions.append_step_summary(markdown, env)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "\n".join(_text(v) for v in value)
    return "" if value is None else str(value)


def notice(
    message: str,
    level: str = "notice",
    *,
    file: str | None = None,
    line: int | None = None,
    title: str = "",
) -> None:
    """Prints a workflow command (::notice:: / ::warning:: / ::error::, escaped, at
    file:line when given: ``iree_conformance.report.annotations``), plain text elsewhere."""
    gh_annotations.emit([gh_annotations.Annotation(level, title, message, file, line)])


def annotate_results(data: Mapping[str, Any]) -> int:
    """The annotations of a results document's unexpected results (annotations.py)."""
    return gh_annotations.annotate_results(data)


# -- platform names -------------------------------------------------------------------------

_OS_ALIASES = {
    "linux": "linux",
    "ubuntu": "linux",
    "macos": "macos",
    "darwin": "macos",
    "osx": "macos",
    "mac": "macos",
    "windows": "windows",
    "win32": "windows",
    "win": "windows",
    "cygwin": "windows",
}
_ARCH_ALIASES = {
    "x64": "x86_64",
    "x86_64": "x86_64",
    "amd64": "x86_64",
    "arm64": "arm64",
    "aarch64": "arm64",
    "x86": "x86",
    "i386": "x86",
    "i686": "x86",
    "arm": "arm",
    "armv7l": "arm",
}


def normalize_os(value: str | None = None) -> str:
    """linux | macos | windows, from $RUNNER_OS-style names, sys.platform or runner labels."""
    text = (value if value is not None else sys.platform).strip().lower()
    for prefix, name in _OS_ALIASES.items():
        if text.startswith(prefix):
            return name
    raise CIError(f"unknown operating system {value!r}; expected one of {', '.join(OS_NAMES)}")


def normalize_arch(value: str | None = None) -> str:
    """x86_64 | arm64 | ..., from $RUNNER_ARCH (X64, ARM64) or platform.machine()."""
    text = (value if value is not None else platform.machine()).strip().lower()
    if text in _ARCH_ALIASES:
        return _ARCH_ALIASES[text]
    raise CIError(f"unknown architecture {value!r}")


def current_os(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return normalize_os(env.get("RUNNER_OS") or sys.platform)


def current_arch(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return normalize_arch(env.get("RUNNER_ARCH") or platform.machine())


# -- sizes ---------------------------------------------------------------------------------


def parse_size(text: str | int | float) -> int:
    """'6GiB', '1.5G', '700M', '1024' -> bytes: cache_tools/units.py's parser (decimal
    units for K/M/G/T, binary for Ki/Mi/Gi/Ti), its error as a CIError."""
    try:
        return _parse_size(text)
    except CacheToolsError as exc:
        raise CIError(str(exc)) from None


def format_size(num_bytes: int | float) -> str:
    """Binary units, one decimal: 1536 -> '1.5 KiB'."""
    value = float(num_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


# -- results JSON --------------------------------------------------------------------------


def load_json(path: Path) -> Any:
    try:
        # utf-8-sig: a BOM written by a Windows tool must not break the load.
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CIError(f"{path}: no such file") from None
    # Deep nesting and huge integers are one CIError too (results.parse_json).
    return results.parse_json(text, str(path), CIError)


def load_results(path: Path) -> dict[str, Any]:
    """Loads a results JSON (ARCHITECTURE.md, schema 1) or a merged file from merge_results.py,
    through the library's one loader (``iree_conformance.model.results``)."""
    return results.load_results(path, results.OUTCOME_KEYS)


def looks_like_results(path: Path) -> bool:
    """A JSON object with schema 1 and an outcomes list (a results or merged file)."""
    return results.looks_like_results(path)


def expand_json_inputs(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; folders searched recursively for results JSON files (sorted).

    Inside folders, JSON files that are not results (durations, manifests) are skipped;
    a file named explicitly is always returned, so that loading it reports what is wrong.
    """
    found: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.extend(
                sorted(q for q in p.rglob("*.json") if q.is_file() and looks_like_results(q))
            )
        elif p.exists():
            found.append(p)
        else:
            raise CIError(f"{p}: no such file or directory")
    return found


def md_escape(text: Any, limit: int = 160) -> str:
    """One table cell: one line, bounded, HTML and Markdown escaped (report.tables)."""
    return md_text(text, limit)


def md_code(text: Any, limit: int = 160) -> str:
    """Untrusted text as inline code in a table cell or list (report.tables)."""
    return _md_code(text, limit)
