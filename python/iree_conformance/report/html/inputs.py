"""Results files for the HTML report: the current run and the history.

Rule: each input (a results file or a merged file) has a start time, its
``metadata.started`` (merged files: the earliest ``started`` of their runs). The inputs
that started within ``CURRENT_WINDOW`` (12 hours) of the newest start are one run, made
on several OSes, targets or shards, and are merged into the matrix as
``ci/merge_results.py`` does. Older inputs are history: they only feed the trend chart,
one point per UTC day. An input without a start time belongs to the current run.
Within one run (or one history day), a case run more than once on the same platform and
target (a repeated run) counts once: the outcome of the latest-started file is kept.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iree_conformance.report.markdown import load_results
from iree_conformance.report.merging import merge_documents
from iree_conformance.report.model import drop_repeats

CURRENT_WINDOW = datetime.timedelta(hours=12)


@dataclass(frozen=True)
class Loaded:
    """One input file and its start time (None when the file has none)."""

    source: str
    data: dict[str, Any]
    started: datetime.datetime | None


def _parse_time(text: Any) -> datetime.datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)


def metadata_list(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The run metadata of a results file (one) or of a merged file (one per run)."""
    if data.get("kind") == "merged":
        return [r.get("metadata") or {} for r in data.get("runs", [])]
    return [data.get("metadata") or {}]


def started_of(data: dict[str, Any]) -> datetime.datetime | None:
    """Earliest ``started`` among the file's runs."""
    times = [t for t in (_parse_time(m.get("started")) for m in metadata_list(data)) if t]
    return min(times) if times else None


def load(paths: list[Path]) -> list[Loaded]:
    """Loads every input (raises report.ReportError on a bad file)."""
    loaded = []
    for path in paths:
        data = load_results(path)
        loaded.append(Loaded(Path(path).name, data, started_of(data)))
    return loaded


def split_current(loaded: list[Loaded]) -> tuple[list[Loaded], list[Loaded]]:
    """(current run, history), each in input order; see the module docstring."""
    times = [x.started for x in loaded if x.started]
    if not times:
        return list(loaded), []
    newest = max(times)
    current = [x for x in loaded if x.started is None or newest - x.started <= CURRENT_WINDOW]
    history = [x for x in loaded if x not in current]
    return current, history


def merge_loaded(loaded: list[Loaded]) -> dict[str, Any]:
    """One merged document (the shape ci/merge_results.py writes), repeats dropped."""
    merged = merge_documents((x.source, x.data) for x in loaded)
    merged["outcomes"], merged["repeats_dropped"] = drop_repeats(merged)
    return merged
