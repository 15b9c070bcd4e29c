"""The results JSON: its schema, and the one loader of results (and merged) files.

A results file (``pytest conformance --report-json``) is ``{"schema": 1, "metadata":
{...}, "outcomes": [Outcome, ...]}``; a merged file (``ci/merge_results.py``) is
``{"schema": 1, "kind": "merged", "runs": [...], "outcomes": [...]}``. The Markdown
report, the HTML report, the ci/ scripts and bundles all read them through
``load_results``. Each Outcome keeps ``info.cache_hits`` (whether import and compile came
from the artifact store).

Standard library only: ci/ scripts import it from the source tree before any install.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.vocabulary import VERDICTS  # noqa: F401 - the verdict columns, re-exported

SCHEMA = 1
MERGED_KIND = "merged"
#: The keys every outcome of a results file has (the plugin writes them all).
OUTCOME_KEYS = ("case_id", "target", "status", "verdict")


class ResultsError(ConfigurationError):
    """A results file that is missing, not JSON, or not of this schema (exit status 2)."""


def results_document(metadata: dict[str, Any], outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """A results file's content, outcomes in a stable order."""
    return {
        "schema": SCHEMA,
        "metadata": metadata,
        "outcomes": sorted(outcomes, key=lambda o: (o["suite"], o["target"], o["case_id"])),
    }


def load_results(path: Path, outcome_keys: Iterable[str] = OUTCOME_KEYS) -> dict[str, Any]:
    """A results or merged file; outcome_keys (by default the keys every outcome has) are
    checked on every outcome, present and strings: every reader indexes them."""
    try:
        # utf-8-sig: a BOM written by a Windows tool must not break the load.
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: results file not found") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: expected a JSON object (a results file of schema {SCHEMA})")
    if data.get("schema") != SCHEMA:
        raise ResultsError(
            f"{path}: unsupported results schema {data.get('schema')!r} (expected {SCHEMA}, with keys schema, metadata, outcomes)"
        )
    outcomes = data.get("outcomes")
    if not isinstance(outcomes, list):
        raise ResultsError(f"{path}: 'outcomes' must be a list")
    keys = tuple(outcome_keys)
    for i, outcome in enumerate(outcomes):
        if not isinstance(outcome, dict):
            raise ResultsError(f"{path}: outcomes[{i}] is not an object")
        missing = [k for k in keys if k not in outcome]
        if missing:
            raise ResultsError(
                f"{path}: outcomes[{i}] lacks {', '.join(missing)}; "
                "is it a results file written by pytest conformance --report-json?"
            )
        wrong = [k for k in keys if not isinstance(outcome[k], str)]
        if wrong:
            raise ResultsError(
                f"{path}: outcomes[{i}]: {', '.join(wrong)} must be text; "
                "is it a results file written by pytest conformance --report-json?"
            )
    return data


def looks_like_results(path: Path) -> bool:
    """A JSON object of this schema with an outcomes list (a results or merged file)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(data, dict)
        and data.get("schema") == SCHEMA
        and isinstance(data.get("outcomes"), list)
    )


Key = TypeVar("Key")  # how a caller indexes a run's outcomes: CaseKey text, case id, ...

#: The fields on which two runs' verdicts are compared, case by case.
VERDICT_FIELDS = ("status", "stage", "verdict")


@dataclasses.dataclass(frozen=True)
class ResultsDiff:
    """Two runs' outcomes compared case by case (keys as the caller indexed them)."""

    compared: int  # cases on both sides
    differ: dict[Any, dict[str, tuple[Any, Any]]]  # key -> {field: (before, after)}
    only_before: list[Any]
    only_after: list[Any]

    @property
    def changed_keys(self) -> list[Any]:
        """Every key that differs or is on one side only, sorted."""
        return sorted({*self.differ, *self.only_before, *self.only_after})


def diff_outcomes(
    before: Mapping[Key, Mapping[str, Any]],
    after: Mapping[Key, Mapping[str, Any]],
    fields: Iterable[str] = VERDICT_FIELDS,
) -> ResultsDiff:
    """The one case-by-case comparison of two runs' outcomes (each indexed by the caller:
    by ``CaseKey``, case id, or platform and case): which differ on ``fields`` and which
    are on one side only. ci/diff_results.py, devtools/check_batch_equivalence.py and
    benchmarks/suitespeed/outcome_stats.py all compare through it."""
    names = tuple(fields)
    shared = before.keys() & after.keys()
    differ = {}
    for key in sorted(shared):  # type: ignore[type-var]  # one run's keys sort among themselves
        changes = {
            f: (before[key].get(f), after[key].get(f))
            for f in names
            if before[key].get(f) != after[key].get(f)
        }
        if changes:
            differ[key] = changes
    return ResultsDiff(
        compared=len(shared),
        differ=differ,
        only_before=sorted(before.keys() - after.keys()),
        only_after=sorted(after.keys() - before.keys()),
    )
