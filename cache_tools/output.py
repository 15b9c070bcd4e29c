"""Write results where a workflow reads them (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY), and
tables and JSON for people.

cache-tools is its own distribution, so it writes the file commands itself, byte for
byte as the library's ``iree_conformance.common.ghactions`` does (UTF-8, ``\\n`` line ends
on every OS, the heredoc form with a random delimiter for multi-line values);
tests/unit/core/test_policies.py checks that both write the same bytes.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from typing import Any, TextIO


def _value_text(value: Any) -> str:
    """true/false for booleans, one item per line for lists, compact JSON for dicts."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "\n".join(_value_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return "" if value is None else str(value)


def format_outputs(values: Mapping[str, Any]) -> str:
    """``name=value`` lines; multi-line values use the heredoc form with a random delimiter."""
    out = []
    for name, value in values.items():
        text = _value_text(value)
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


def write_github_outputs(values: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """Append to $GITHUB_OUTPUT when set; returns whether anything was written."""
    return _append("GITHUB_OUTPUT", format_outputs(values), env)


def write_step_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    """Append Markdown (then a blank line) to $GITHUB_STEP_SUMMARY when set."""
    return _append("GITHUB_STEP_SUMMARY", markdown.rstrip("\n") + "\n\n", env)


def print_json(data: Any, out: TextIO) -> None:
    json.dump(data, out, indent=2, sort_keys=False, default=str)
    out.write("\n")


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A plain aligned text table (numbers right-aligned)."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    numeric = [
        all(_is_number(row[i]) for row in cells) and bool(cells) for i in range(len(headers))
    ]

    def fmt(row: list[str]) -> str:
        return "  ".join(
            c.rjust(widths[i]) if numeric[i] else c.ljust(widths[i]) for i, c in enumerate(row)
        ).rstrip()

    lines = [fmt(headers), "  ".join("-" * w for w in widths)]
    lines.extend(fmt(row) for row in cells)
    return "\n".join(lines)


def markdown_table(headers: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out.extend("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows)
    return "\n".join(out)


def _is_number(text: str) -> bool:
    t = text.replace(",", "").replace("%", "").replace(" ", "")
    for suffix in ("TiB", "GiB", "MiB", "KiB", "B"):
        if t.endswith(suffix):
            t = t[: -len(suffix)]
            break
    try:
        float(t)
    except ValueError:
        return False
    return True
