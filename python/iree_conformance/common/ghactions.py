"""GitHub Actions file commands: the one writer of ``$GITHUB_OUTPUT``, ``$GITHUB_ENV`` and
``$GITHUB_STEP_SUMMARY`` for the library (``iree-conformance report``), cache_tools and
the ci/ scripts.

Files are appended as UTF-8 with ``\\n`` line ends on every OS (``newline="\\n"``: the
runner reads them the same way everywhere); multi-line values use the heredoc form with
a random delimiter. Standard library only: ci/ scripts import it before any install.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["append_step_summary", "format_pairs", "value_text", "write_env", "write_outputs"]


def value_text(value: Any) -> str:
    """true/false for booleans, one item per line for lists, compact JSON for dicts."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "\n".join(value_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return "" if value is None else str(value)


def format_pairs(values: Mapping[str, Any]) -> str:
    """``name=value`` lines; a multi-line value as ``name<<delimiter`` ... ``delimiter``."""
    out = []
    for name, value in values.items():
        text = value_text(value)
        if "\n" in text or "\r" in text:
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            out.append(f"{name}<<{delimiter}\n{text}\n{delimiter}\n")
        else:
            out.append(f"{name}={text}\n")
    return "".join(out)


def _append(variable: str, text: str, env: Mapping[str, str] | None) -> bool:
    path = (os.environ if env is None else env).get(variable)
    if not path:
        return False
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return True


def write_outputs(values: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """Appends step outputs to $GITHUB_OUTPUT; False when it is not set (not on Actions)."""
    return _append("GITHUB_OUTPUT", format_pairs(values), env)


def write_env(values: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """Appends variables for the following steps to $GITHUB_ENV."""
    return _append("GITHUB_ENV", format_pairs(values), env)


def append_step_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    """Appends Markdown (then a blank line) to $GITHUB_STEP_SUMMARY; False when unset."""
    return _append("GITHUB_STEP_SUMMARY", markdown.rstrip("\n") + "\n\n", env)
