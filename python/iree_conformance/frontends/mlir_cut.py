"""MLIR sources cut to the failing function (StableHLO, exported JAX programs).

A compile error names a line of the module IREE compiled (``source.mlir:LINE:COL``).
``cut_to_failing_function`` keeps the top-level function that holds that line, the
functions it calls (transitively) and every top-level op that is no function (globals),
drops the other functions, and makes the kept failing function public (a private one
that nothing calls would be dropped by the compiler before it fails). It works on the
printed text: functions are found by their ``func.func`` line at the module's
indentation, and one ends where the next top-level op begins.

The ops inside the function are reduced by ``mlir_reduce`` (which starts from this cut;
IREE's ``iree-reduce`` is built only in source builds, not in the wheels).
"""

from __future__ import annotations

import dataclasses
import re

__all__ = ["MlirCut", "NOT_REDUCED", "cut_to_failing_function"]

NOT_REDUCED = (
    "the ops inside the function are not reduced (iree-reduce, which would, ships only in "
    "IREE source builds)"
)

_LOCATION = re.compile(r"^[^\s:]+:(\d+):\d+:")
_FUNC = re.compile(r"^(\s*)func\.func\s+(?:(public|private|nested)\s+)?@([\w$.-]+|\"[^\"]+\")")
_SYMBOL = re.compile(r"@([\w$.-]+)")


@dataclasses.dataclass(frozen=True)
class MlirCut:
    """The cut module, the failing function, and what was dropped."""

    text: str
    function: str
    kept: tuple[str, ...]  # the functions kept (the failing one and what it calls)
    dropped: tuple[str, ...]

    def summary(self) -> str:
        return (
            f"cut to the failing function @{self.function} (kept {len(self.kept)} of "
            f"{len(self.kept) + len(self.dropped)} functions); {NOT_REDUCED}"
        )


def _blocks(lines: list[str]) -> tuple[list[tuple[str, int, int]], str] | None:
    """The top-level functions as (name, first line, end line exclusive), and the module's
    top-level indentation; None when the text has no function."""
    starts = [(i, m) for i, line in enumerate(lines) if (m := _FUNC.match(line))]
    if not starts:
        return None
    indent = min(len(m.group(1)) for _, m in starts)
    top = [(i, m) for i, m in starts if len(m.group(1)) == indent]
    # A top-level op starts at the module's indentation with no leading "}".
    boundaries = [
        i
        for i, line in enumerate(lines)
        if line.strip()
        and len(line) - len(line.lstrip()) <= indent
        and not line.lstrip().startswith("}")
    ]
    blocks = []
    for i, m in top:
        later = [b for b in boundaries if b > i]
        end = later[0] if later else len(lines)
        # The module's closing brace belongs to no function.
        while (
            end > i + 1
            and lines[end - 1].strip() == "}"
            and (len(lines[end - 1]) - len(lines[end - 1].lstrip()) < indent)
        ):
            end -= 1
        blocks.append((m.group(3).strip('"'), i, end))
    return blocks, " " * indent


def cut_to_failing_function(text: str, first_line: str) -> MlirCut | None:
    """The module cut to the function that holds the error's line, or None when the line
    names no line of a function of ``text`` (the error is at module level, or has no
    location)."""
    where = _LOCATION.match(first_line.strip())
    lines = text.splitlines(keepends=True)
    found = _blocks(lines)
    if where is None or found is None:
        return None
    line_index = int(where.group(1)) - 1
    blocks, _ = found
    failing = next((b for b in blocks if b[1] <= line_index < b[2]), None)
    if failing is None:
        return None
    by_name = {name: (start, end) for name, start, end in blocks}
    kept, todo = [failing[0]], [failing[0]]
    while todo:
        start, end = by_name[todo.pop()]
        for symbol in _SYMBOL.findall("".join(lines[start + 1 : end])):
            if symbol in by_name and symbol not in kept:
                kept.append(symbol)
                todo.append(symbol)
    drop = {i for name, start, end in blocks if name not in kept for i in range(start, end)}
    out = []
    for i, line in enumerate(lines):
        if i in drop:
            continue
        if i == failing[1]:
            line = re.sub(r"func\.func\s+(private|nested)\s+@", "func.func @", line, count=1)
        out.append(line)
    dropped = tuple(name for name, _, _ in blocks if name not in kept)
    return MlirCut("".join(out), failing[0], tuple(kept), dropped)
