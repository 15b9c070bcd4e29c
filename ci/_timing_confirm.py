"""The timing confirm of a CI run: which cases of a results file were timed, and the fold
of a second timing run's figures into it as ``metrics.benchmark.confirm_runs``.

One run per side cannot tell a change from a shared runner's noise: a busy moment moves a
whole run (docs/speed.md). ``ci run-shard`` therefore times the timed cases again, in the
same job with the warm store, and keeps each second timing beside the first; the
comparison (``report/speed.compare_results``) counts it as one more run of that side.
Only the samples travel (IREE's and the interleaved reference's): the confirm run's
verdicts, memory and compile figures are not used.

Standard library only, as the rest of ci/.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from iree_conformance.common.fsutil import atomic_write_text

#: The fields of a figure (IREE's, the reference's) that a confirm run keeps.
KEPT_FIELDS = {
    "iree": ("samples_s", "loops", "function"),
    "reference": ("name", "interleaved", "samples_s", "loops"),
}

Key = tuple[str, str, str, str]  # (target, case_id, os, arch); os/arch "" in a shard's file


def outcome_key(outcome: Mapping[str, Any]) -> Key:
    """Target and case id, with the OS and architecture when the outcome carries them (a
    merged file's outcomes do; a shard's file has them in its metadata only)."""
    return (
        str(outcome.get("target", "")),
        str(outcome.get("case_id", "")),
        str(outcome.get("os", "")),
        str(outcome.get("arch", "")),
    )


def _benchmark(outcome: Mapping[str, Any]) -> Mapping[str, Any] | None:
    metrics = outcome.get("metrics")
    bench = metrics.get("benchmark") if isinstance(metrics, Mapping) else None
    return bench if isinstance(bench, Mapping) else None


def has_samples(figure: Any) -> bool:
    samples = figure.get("samples_s") if isinstance(figure, Mapping) else None
    return isinstance(samples, list) and len(samples) > 0


def timed_cases(outcomes: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """target -> the sorted case ids whose outcome has IREE timing samples."""
    found: dict[str, set[str]] = {}
    for outcome in outcomes:
        bench = _benchmark(outcome)
        if bench is not None and has_samples(bench.get("iree")):
            found.setdefault(str(outcome["target"]), set()).add(str(outcome["case_id"]))
    return {target: sorted(cases) for target, cases in sorted(found.items())}


def target_groups(timed: Mapping[str, list[str]]) -> list[tuple[list[str], list[str]]]:
    """[(targets, case ids)]: the targets that timed the same cases share one run (usually
    all of them), so that no case runs again on a target where it was not timed."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for target, cases in timed.items():
        groups.setdefault(tuple(cases), []).append(target)
    return [(targets, list(cases)) for cases, targets in groups.items()]


def confirm_figures(outcome: Mapping[str, Any]) -> dict[str, Any] | None:
    """The timing of one confirm outcome, reduced to what the comparison reads: IREE's
    samples and loops, and the reference's name, interleaving, samples and loops; None
    when the outcome has no IREE samples (it failed, or was not timed)."""
    bench = _benchmark(outcome)
    if bench is None or not has_samples(bench.get("iree")):
        return None
    out: dict[str, Any] = {}
    for section, fields in KEPT_FIELDS.items():
        figure = bench.get(section)
        if has_samples(figure):
            assert isinstance(figure, Mapping)
            out[section] = {f: figure[f] for f in fields if f in figure}
    return out


def fold(results: dict[str, Any], confirm_outcomes: Iterable[Mapping[str, Any]]) -> int:
    """Appends each confirm outcome's timing to the matching timed outcome of results
    (same target, case id, OS and architecture) as one more ``confirm_runs`` entry; an
    outcome of results without timing, or a confirm outcome without samples, is left
    alone. Returns how many entries were added."""
    wanted: dict[Key, dict[str, Any]] = {}
    for outcome in confirm_outcomes:
        figures = confirm_figures(outcome)
        if figures is not None:
            wanted.setdefault(outcome_key(outcome), figures)
    added = 0
    for outcome in results.get("outcomes", []):
        bench = _benchmark(outcome)
        figures = wanted.get(outcome_key(outcome))
        if figures is None or bench is None or not has_samples(bench.get("iree")):
            continue
        runs = bench.get("confirm_runs")
        assert isinstance(bench, dict)
        bench["confirm_runs"] = [*(runs if isinstance(runs, list) else []), figures]
        added += 1
    return added


def write_results(path: Path, results: Mapping[str, Any]) -> None:
    """The results file again, as the plugin writes it, in one atomic replace (never
    half written)."""
    atomic_write_text(path, json.dumps(results, indent=1, default=str))
