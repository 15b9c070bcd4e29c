"""Picks the meaningful lines out of compiler and runtime output."""

from __future__ import annotations

import re

_ERROR = re.compile(
    r"\berror\b|Error|FAILED|Assertion|Aborted|Segmentation|UNIMPLEMENTED|INVALID_ARGUMENT|failed",
    re.I,
)
_NOISE = re.compile(
    r"^\s*(\d+\s+0x[0-9a-f]+|#\d+ 0x|Stack dump:|PLEASE submit a bug report|0\.\s+Program arguments)"
)


def first_meaningful_lines(text: str, limit: int = 8) -> list[str]:
    """The compiler's error and the lines right after it, without stack dumps or argv."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not _NOISE.match(ln)]
    for i, line in enumerate(lines):
        if _ERROR.search(line):
            return lines[i : i + limit]
    return lines[:limit]


def _plain_scalar(match: re.Match[str]) -> str:
    """numpy's repr of a scalar (``np.float32(0.1)``) as its str (``0.1``; complex in
    parentheses, as numpy prints it)."""
    kind, value = match.group(1), match.group(2)
    return f"({value})" if kind.startswith("complex") else value


def normalize(line: str) -> str:
    """A first error line with locations, numbers and SSA names folded, for grouping."""
    line = re.sub(r"^\S+:\d+:\d+:\s*", "", line)  # file:line:col:
    line = re.sub(r"loc\([^)]*\)", "loc(...)", line)
    line = re.sub(r"%[\w#]+", "%_", line)
    # Results written before messages printed plain numbers: `np.float32(0.1) expected`
    # reads as `0.1, expected`, so old and new messages fall into one group.
    line = re.sub(r"\bnp\.(\w+)\(([^()]*)\)", _plain_scalar, line)
    line = re.sub(r"(\bactual \S+?),? expected\b", r"\1, expected", line)
    line = re.sub(r"\d+", "N", line)
    return line.strip()[:200]
