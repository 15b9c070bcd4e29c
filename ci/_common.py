"""Helpers shared by the scripts in ci/: GitHub Actions file commands, platform names,
sizes and results-JSON loading.

Standard library only: these scripts run before the project is installed (install.py,
setup_env.py) and on every runner OS, so nothing here may assume bash, symlinks or a
particular line ending.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent

OS_NAMES = ("linux", "macos", "windows")
RESULTS_SCHEMA = 1


class CIError(Exception):
    """A problem the user can fix; scripts print it without a traceback and exit 2."""


def run_main(main, argv: list[str] | None = None) -> int:
    """Calls main(argv), turning CIError into a one-line message and exit status 2."""
    try:
        return int(main(argv) or 0)
    except CIError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


# -- GitHub Actions file commands ---------------------------------------------------------

def _append(path: str, text: str) -> None:
    # newline="\n": the runner reads these files the same way on every OS.
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def _format_pair(name: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        delimiter = f"ghadelimiter_{uuid.uuid4().hex}"
        return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"
    return f"{name}={value}\n"


def set_outputs(values: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """Appends step outputs to $GITHUB_OUTPUT (multi-line values use a random delimiter).

    Lists become one item per line, booleans true/false. Returns False when not on Actions.
    """
    env = os.environ if env is None else env
    path = env.get("GITHUB_OUTPUT")
    if not path:
        return False
    _append(path, "".join(_format_pair(k, _text(v)) for k, v in values.items()))
    return True


def set_env(values: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """Appends variables for the following steps to $GITHUB_ENV."""
    env = os.environ if env is None else env
    path = env.get("GITHUB_ENV")
    if not path:
        return False
    _append(path, "".join(_format_pair(k, _text(v)) for k, v in values.items()))
    return True


def write_report(payload: Any, markdown: str, output: str | None, markdown_path: str | None, summary: bool) -> None:
    """The JSON to --output, the Markdown to --markdown (else stdout), and to the step
    summary with --summary: the output contract shared by the results scripts."""
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8", newline="\n")
    if markdown_path:
        Path(markdown_path).parent.mkdir(parents=True, exist_ok=True)
        Path(markdown_path).write_text(markdown, encoding="utf-8", newline="\n")
    if summary:
        append_summary(markdown)
    if not markdown_path:
        sys.stdout.write(markdown)


def append_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    """Appends Markdown to the job's step summary ($GITHUB_STEP_SUMMARY)."""
    env = os.environ if env is None else env
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return False
    _append(path, markdown.rstrip("\n") + "\n\n")
    return True


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "\n".join(_text(v) for v in value)
    return "" if value is None else str(value)


def notice(message: str, level: str = "notice") -> None:
    """Prints a workflow command (::notice:: / ::warning:: / ::error::), plain text elsewhere."""
    if os.environ.get("GITHUB_ACTIONS") == "true":
        print(f"::{level}::{message}")
    else:
        print(f"{level}: {message}", file=sys.stderr)


# -- platform names -------------------------------------------------------------------------

_OS_ALIASES = {
    "linux": "linux", "ubuntu": "linux",
    "macos": "macos", "darwin": "macos", "osx": "macos", "mac": "macos",
    "windows": "windows", "win32": "windows", "win": "windows", "cygwin": "windows",
}
_ARCH_ALIASES = {
    "x64": "x86_64", "x86_64": "x86_64", "amd64": "x86_64",
    "arm64": "arm64", "aarch64": "arm64",
    "x86": "x86", "i386": "x86", "i686": "x86",
    "arm": "arm", "armv7l": "arm",
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

_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9, "t": 10**12, "tb": 10**12,
    "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30, "ti": 2**40, "tib": 2**40,
}


def parse_size(text: str | int | float) -> int:
    """'6GiB', '1.5G', '700M', '1024' -> bytes (decimal units for K/M/G, binary for Ki/Mi/Gi)."""
    if isinstance(text, bool):
        raise CIError(f"not a size: {text!r}")
    if isinstance(text, (int, float)):
        if text < 0:
            raise CIError(f"size must not be negative: {text!r}")
        return int(text)
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise CIError(f"not a size: {text!r} (examples: 6GiB, 1.5G, 700M, 1048576)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


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
        return json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise CIError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise CIError(f"{path}: not valid JSON ({exc})") from None


def load_results(path: Path) -> dict[str, Any]:
    """Loads a results JSON (ARCHITECTURE.md, schema 1) or a merged file from merge_results.py."""
    data = load_json(path)
    if not isinstance(data, dict):
        raise CIError(f"{path}: expected a JSON object")
    if data.get("schema") != RESULTS_SCHEMA:
        raise CIError(f"{path}: unsupported results schema {data.get('schema')!r} (expected {RESULTS_SCHEMA})")
    outcomes = data.get("outcomes")
    if not isinstance(outcomes, list):
        raise CIError(f"{path}: 'outcomes' must be a list")
    for i, outcome in enumerate(outcomes):
        if not isinstance(outcome, dict):
            raise CIError(f"{path}: outcomes[{i}] is not an object")
        missing = [k for k in ("case_id", "target", "status", "verdict") if k not in outcome]
        if missing:
            raise CIError(f"{path}: outcomes[{i}] lacks {', '.join(missing)}")
    return data


def looks_like_results(path: Path) -> bool:
    """A JSON object with schema 1 and an outcomes list (a results or merged file)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("schema") == RESULTS_SCHEMA and isinstance(data.get("outcomes"), list)


def expand_json_inputs(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; folders searched recursively for results JSON files (sorted).

    Inside folders, JSON files that are not results (durations, manifests) are skipped;
    a file named explicitly is always returned, so that loading it reports what is wrong.
    """
    found: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.extend(sorted(q for q in p.rglob("*.json") if q.is_file() and looks_like_results(q)))
        elif p.exists():
            found.append(p)
        else:
            raise CIError(f"{p}: no such file or directory")
    return found


def md_escape(text: Any, limit: int = 160) -> str:
    """One table cell: no pipes, no newlines, bounded length."""
    s = " ".join(str(text if text is not None else "").split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("\\", "\\\\").replace("|", "\\|")
