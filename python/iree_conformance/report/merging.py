"""Merging results files of one run made on several OSes, targets or shards.

Standard library only: ``ci/merge_results.py`` imports this module from the source tree
before the project is installed. Every outcome of the merged document is tagged with
the OS, architecture and Python minor version of the run it came from, and with the
index of that run in ``runs``; an already merged document can be merged again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from iree_conformance.model.results import MERGED_KIND, SCHEMA


def python_minor(version: Any) -> str:
    """'3.11.7' -> '3.11'; '?' when unknown."""
    parts = str(version or "").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else (str(version) if version else "?")


def suite_of(outcome: dict[str, Any]) -> str:
    """The outcome's suite ("?" when a hand-made file lacks it: every Outcome the plugin
    writes names its suite, and case-id prefixes belong to the suite registry)."""
    return str(outcome.get("suite") or "?")


def run_record(source: str, meta: dict[str, Any], count: int) -> dict[str, Any]:
    """One entry of a merged document's ``runs``."""
    return {
        "source": source,
        "os": meta.get("os", "?"),
        "arch": meta.get("arch", "?"),
        "python": meta.get("python", "?"),
        "targets": list(meta.get("targets", [])),
        "outcome_count": count,
        "metadata": meta,
    }


def merge_documents(documents: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Merged document from (source name, results or merged document) pairs, in order."""
    runs: list[dict[str, Any]] = []
    outcomes: list[dict[str, Any]] = []
    for source, data in documents:
        if data.get("kind") == MERGED_KIND:
            offset = len(runs)
            runs.extend(data.get("runs", []))
            for o in data["outcomes"]:
                outcomes.append({**o, "run": int(o.get("run", 0)) + offset})
            continue
        meta = data.get("metadata") or {}
        run_index = len(runs)
        runs.append(run_record(source, meta, len(data["outcomes"])))
        for o in data["outcomes"]:
            outcomes.append(
                {
                    **o,
                    "os": o.get("os") or meta.get("os", "?"),
                    "arch": o.get("arch") or meta.get("arch", "?"),
                    "python": python_minor(o.get("python") or meta.get("python")),
                    "run": run_index,
                }
            )
    return {"schema": SCHEMA, "kind": MERGED_KIND, "runs": runs, "outcomes": outcomes}
