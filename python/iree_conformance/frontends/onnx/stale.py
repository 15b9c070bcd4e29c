"""Removal of temporary files and folders abandoned by killed processes.

Downloads and tree builds write into private temporaries next to their target. A
process killed mid-way leaves one behind; a live one keeps touching its own. So a
temporary untouched for ``max_age`` seconds is abandoned and safe to delete.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

__all__ = ["STALE_AFTER", "remove_stale"]

STALE_AFTER = 3600.0


def remove_stale(folder: Path, pattern: str, max_age: float = STALE_AFTER) -> list[Path]:
    """Delete entries of ``folder`` matching ``pattern`` not modified for ``max_age`` s."""
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    cutoff = time.time() - max_age
    for path in folder.glob(pattern):
        try:
            if path.stat().st_mtime >= cutoff:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
        except OSError:
            continue  # another process removed or replaced it first
    return removed
