"""Write results where a workflow reads them: GITHUB_OUTPUT and GITHUB_STEP_SUMMARY."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from typing import Any, TextIO


def format_outputs(values: Mapping[str, Any]) -> str:
    """``name=value`` lines; multi-line values use the heredoc form with a random delimiter."""
    lines: list[str] = []
    for name, value in values.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            text = "\n".join(str(v) for v in value)
        elif isinstance(value, dict):
            text = json.dumps(value, separators=(",", ":"))
        else:
            text = str(value)
        if "\n" in text or "\r" in text:
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            lines.append(f"{name}<<{delimiter}\n{text}\n{delimiter}")
        else:
            lines.append(f"{name}={text}")
    return "\n".join(lines) + "\n"


def write_github_outputs(values: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """Append to $GITHUB_OUTPUT when set; returns whether anything was written."""
    env = os.environ if env is None else env
    path = env.get("GITHUB_OUTPUT")
    if not path:
        return False
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(format_outputs(values))
    return True


def write_step_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return False
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(markdown.rstrip("\n") + "\n\n")
    return True


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
