"""Picks the meaningful lines out of compiler and runtime output, and keeps every
diagnostic line a person reads under ``MAX_LINE_CHARS`` (``cap_diagnostics``)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

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


#: No diagnostic line longer than this reaches the console, a pytest log or the JSON.
MAX_LINE_CHARS = 1024
#: What a capped line keeps of its start.
KEPT_CHARS = 400
_OP_NAME = re.compile(r"""["'](onnx\.[A-Za-z_]\w*|[a-z_]+\.[a-z_][\w.]*)["']""")


def _capped(line: str, where: str) -> str:
    head = line[:KEPT_CHARS]
    ops = [m.group(1) for m in _OP_NAME.finditer(line)]
    named = next((op for op in ops if op.startswith("onnx.")), ops[0] if ops else None)
    op_note = f" (op {named})" if named and named not in head else ""
    return f"{head} ... [{len(line) - KEPT_CHARS} more characters{op_note}; full text: {where}]"


def cap_diagnostics(entries: list[str], spill_dir: Path | None) -> tuple[list[str], str | None]:
    """Entries with every line over ``MAX_LINE_CHARS`` cut to its first ``KEPT_CHARS``
    characters (and the name of the op it is about, where the cut loses it), and the
    path of the file that keeps the full text (None when nothing was cut).

    The file is ``<spill_dir>/<sha256 of the text>.txt``: content-keyed, so runs that
    share a store share it; when writing it fails, the message says it was not kept."""
    if not any(len(line) > MAX_LINE_CHARS for e in entries for line in e.splitlines()):
        return entries, None
    full = "\n".join(entries) + "\n"
    where: str | None = None
    if spill_dir is not None:
        path = Path(spill_dir) / f"{hashlib.sha256(full.encode()).hexdigest()[:32]}.txt"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.is_file():
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(full, encoding="utf-8", newline="\n")
                os.replace(tmp, path)
            where = str(path)
        except OSError:
            where = None
    note = where or "not kept (the diagnostics folder cannot be written)"
    capped = [
        "\n".join(
            _capped(line, note) if len(line) > MAX_LINE_CHARS else line for line in e.splitlines()
        )
        for e in entries
    ]
    return capped, where


def diagnostics_dir(store_dir: Path | None) -> Path:
    """Where full diagnostics go: the artifact store's ``diagnostics/`` folder, or, with
    no store (``--no-cache``), ``iree-conformance-diagnostics`` in the temp folder."""
    if store_dir is not None:
        return Path(store_dir) / "diagnostics"
    import tempfile

    return Path(tempfile.gettempdir()) / "iree-conformance-diagnostics"


def cap_outcome_diagnostics(outcome: Any, store_dir: Path | None) -> None:
    """Caps an Outcome's diagnostics (``cap_diagnostics``) and names the file with the
    full text in ``outcome.info["diagnostics_file"]``."""
    capped, where = cap_diagnostics(list(outcome.diagnostics), diagnostics_dir(store_dir))
    if where is not None or capped != outcome.diagnostics:
        outcome.diagnostics = capped
        if where is not None:
            outcome.info["diagnostics_file"] = where
