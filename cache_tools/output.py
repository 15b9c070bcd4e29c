"""Write results where a workflow reads them (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY: the
library's one writer, ``iree_conformance.common.ghactions``), and tables and JSON for people."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

from iree_conformance.common import ghactions


def format_outputs(values: Mapping[str, Any]) -> str:
    """``name=value`` lines; multi-line values use the heredoc form with a random delimiter."""
    return ghactions.format_pairs(values)


def write_github_outputs(values: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """Append to $GITHUB_OUTPUT when set; returns whether anything was written."""
    return ghactions.write_outputs(values, env)


def write_step_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    return ghactions.append_step_summary(markdown, env)


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
