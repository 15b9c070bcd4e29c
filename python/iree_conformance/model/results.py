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
import math
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.unicode_text import SURROGATE_ESCAPE, clean_strings
from iree_conformance.common.vocabulary import VERDICTS  # noqa: F401 - the verdict columns, re-exported

SCHEMA = 1
MERGED_KIND = "merged"
#: The keys every outcome of a results file has (the plugin writes them all).
OUTCOME_KEYS = ("case_id", "target", "status", "verdict")
#: The largest results file read (a full nightly's merged file is about 120 MB).
MAX_RESULTS_BYTES = 1 << 30
#: The compile statistics that are counts (``report/compile_stats.py``).
COUNT_FIELDS = ("module_bytes", "dispatches", "executables", "batch_size")


class ResultsError(ConfigurationError):
    """A results file that is missing, not JSON, or not of this schema (exit status 2)."""


def results_document(metadata: dict[str, Any], outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """A results file's content, outcomes in a stable order."""
    return {
        "schema": SCHEMA,
        "metadata": clean_strings(metadata),  # no lone surrogate: every reader can write it
        "outcomes": sorted(
            clean_strings(outcomes), key=lambda o: (o["suite"], o["target"], o["case_id"])
        ),
    }


def parse_json(text: str | bytes, where: str, error: type[Exception] = ResultsError) -> Any:
    """JSON from an untrusted file, every failure one ``error`` naming ``where``: invalid
    JSON, nesting too deep for the parser (RecursionError) and integers past Python's
    4300-digit limit (ValueError) alike."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{where}: not valid JSON ({e})") from None
    except RecursionError:
        raise error(f"{where}: nested too deeply to read (not a file this project wrote)") from None
    except ValueError as e:  # an integer of more than 4300 digits
        raise error(f"{where}: not readable JSON ({e})") from None


def _kind(value: Any) -> str:
    return {str: "text", dict: "an object", list: "a list", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


#: The optional fields of an outcome a reader relies on, and their JSON types.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "suite": (str,),
    "stage": (str,),
    "reason": (str,),
    "expected": (str, type(None)),
    "diagnostics": (list,),
    "stage_times": (dict,),
    "metrics": (dict,),
    "info": (dict,),
    "attempts": (list,),
}


def outcome_problem(outcome: dict[str, Any]) -> str | None:
    """What is wrong with an outcome's fields (their types, its duration, its benchmark
    samples), or None: checked once, on load, so no reader meets a wrong type."""
    for key, types in _FIELD_TYPES.items():
        if key in outcome and not isinstance(outcome[key], types):
            return f"{key} must be {_kind(types[0]())}, got {_kind(outcome[key])}"
    if "duration" in outcome and not (_number(outcome["duration"]) and outcome["duration"] >= 0):
        return f"duration must be a number of seconds (0 or more), got {outcome['duration']!r}"
    if not all(isinstance(d, str) for d in outcome.get("diagnostics", [])):
        return "diagnostics must be a list of text"
    if not all(isinstance(a, dict) for a in outcome.get("attempts", [])):
        return "attempts must be a list of objects"
    for key, value in outcome.get("stage_times", {}).items():
        if not _number(value):
            return f"stage_times.{key} must be a number of seconds, got {value!r}"
    stats = outcome.get("metrics", {}).get("compile_stats")
    if stats is not None and not isinstance(stats, dict):
        return f"metrics.compile_stats must be an object, got {_kind(stats)}"
    problem = _counts_problem(stats or {}, "metrics.compile_stats")
    if problem:
        return problem
    bench = outcome.get("metrics", {}).get("benchmark")
    if bench is not None and not isinstance(bench, dict):
        return f"metrics.benchmark must be an object, got {_kind(bench)}"
    for name, row in (bench or {}).items():
        compiled = row.get("compile") if isinstance(row, dict) else None
        problem = _counts_problem(compiled, f"metrics.benchmark.{name}.compile")
        if problem:
            return problem
        if not isinstance(row, dict) or "samples_s" not in row:
            continue
        samples = row["samples_s"]
        if not isinstance(samples, list) or not all(_number(x) and x > 0 for x in samples):
            return (
                f"metrics.benchmark.{name}.samples_s must be a list of times above 0 s "
                "(finite numbers)"
            )
    return None


def _counts_problem(figures: Any, where: str) -> str | None:
    """A count among ``figures`` that is not a whole number of 0 or more (text,
    infinity, -1e30), or None."""
    if not isinstance(figures, dict):
        return None
    for field in COUNT_FIELDS:
        value = figures.get(field)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            return f"{where}.{field} must be a whole number of 0 or more, got {value!r}"
    return None


def read_results_text(path: Path, cap: int | None = None) -> str:
    """The text of a results file: a regular file (never a device, FIFO or folder) of at
    most ``cap`` bytes (``MAX_RESULTS_BYTES``), read no further; every failure one
    ``ResultsError``."""
    cap = MAX_RESULTS_BYTES if cap is None else cap
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ResultsError(f"{path}: results file not found") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot read it ({e})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ResultsError(f"{path}: not a regular file; give a results JSON file")
        if st.st_size > cap:
            raise ResultsError(
                f"{path}: {st.st_size:,} bytes, more than the {cap:,} a results file may hold"
            )
        try:
            data = f.read(cap + 1)
            # utf-8-sig: a BOM written by a Windows tool must not break the load.
            return data.decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as e:
            raise ResultsError(f"{path}: cannot read it ({e})") from None


def load_results(path: Path, outcome_keys: Iterable[str] = OUTCOME_KEYS) -> dict[str, Any]:
    """A results or merged file, validated once here: outcome_keys (by default the keys
    every outcome has) present and strings on every outcome, the other fields readers use
    of their types (``outcome_problem``), metadata an object; one ``ResultsError`` names
    the file, the outcome and the field."""
    text = read_results_text(Path(path))
    data = parse_json(text, str(path))
    if SURROGATE_ESCAPE.search(text):  # an older file naming a file that is not UTF-8
        data = clean_strings(data)
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: expected a JSON object (a results file of schema {SCHEMA})")
    if data.get("schema") != SCHEMA:
        raise ResultsError(
            f"{path}: unsupported results schema {data.get('schema')!r} (expected {SCHEMA}, with keys schema, metadata, outcomes)"
        )
    if not isinstance(data.get("metadata", {}), dict):
        raise ResultsError(f"{path}: metadata must be an object, got {_kind(data['metadata'])}")
    runs = data.get("runs", [])
    if not isinstance(runs, list) or not all(
        isinstance(r, dict) and isinstance(r.get("metadata", {}), dict) for r in runs
    ):
        raise ResultsError(f"{path}: runs must be a list of objects, each metadata an object")
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
        problem = outcome_problem(outcome)
        if problem:
            case = repr(outcome.get("case_id"))
            case = case if len(case) <= 80 else case[:77] + "..."
            raise ResultsError(f"{path}: outcomes[{i}] ({case}): {problem}")
    return data


def looks_like_results(path: Path) -> bool:
    """A JSON object of this schema with an outcomes list (a results or merged file)."""
    try:
        data = json.loads(read_results_text(Path(path)))
    except (ResultsError, ValueError, RecursionError):
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
