"""Figures read from what the runs recorded (the results JSON's outcomes, the recorded
durations): IREE's own time and the overhead outside it, stage means, shard balance,
and two runs compared case by case."""

from __future__ import annotations

import statistics
from typing import Any

from iree_conformance.model.results import VERDICT_FIELDS, diff_outcomes

IREE_STAGES = ("import", "compile", "load", "run")


def iree_time(outcome: dict[str, Any]) -> float:
    """IREE's own import/compile/load/run of a case; for a case run in its batch, its
    share of the batch's import and compile (which its duration also counts)."""
    times = outcome.get("stage_times", {})
    return sum(times.get(s, 0.0) for s in IREE_STAGES)


def overhead_stats(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """Per case: duration minus IREE's import/compile/load/run, in ms, and the split."""
    ran = [o for o in outcomes if o.get("status") != "skip" and o.get("duration") is not None]
    if not ran:
        return {"count": 0}
    per_case = sorted(1000.0 * (o["duration"] - iree_time(o)) for o in ran)
    split: dict[str, float] = {}
    for o in ran:
        times = o.get("stage_times", {})
        for stage, seconds in times.items():
            if stage not in IREE_STAGES:
                split[stage] = split.get(stage, 0.0) + 1000.0 * seconds
        split["other (IPC, job, worker start)"] = split.get(
            "other (IPC, job, worker start)", 0.0
        ) + 1000.0 * (o["duration"] - sum(times.values()))
    n = len(ran)
    return {
        "count": n,
        "mean_ms": round(statistics.fmean(per_case), 2),
        "median_ms": round(statistics.median(per_case), 2),
        "p90_ms": round(per_case[min(n - 1, int(0.9 * n))], 2),
        "max_ms": round(per_case[-1], 2),
        "iree_s_mean": round(statistics.fmean(iree_time(o) for o in ran), 4),
        "duration_s_mean": round(statistics.fmean(o["duration"] for o in ran), 4),
        "split_ms_mean": {
            k: round(v / n, 2) for k, v in sorted(split.items(), key=lambda kv: -kv[1])
        },
    }


def stage_means(outcomes: list[dict[str, Any]], stages: tuple[str, ...]) -> dict[str, float]:
    if not outcomes:
        return {}
    return {
        s: round(statistics.fmean(o.get("stage_times", {}).get(s, 0.0) for o in outcomes), 4)
        for s in stages
    }


def shard_balance(
    durations: dict[str, float], counts: tuple[int, ...] = (2, 3, 4)
) -> dict[int, dict[str, float]]:
    """How evenly --shard I/N splits the recorded durations."""
    from iree_conformance.engine.sharding import assign

    keys = sorted(durations)
    result = {}
    for n in counts:
        if len(keys) < n:
            continue
        shards = assign(keys, durations, n)
        loads = [0.0] * n
        for key, shard in zip(keys, shards):
            loads[shard] += durations[key]
        result[n] = {
            "max_s": round(max(loads), 2),
            "min_s": round(min(loads), 2),
            "spread": round((max(loads) - min(loads)) / max(loads), 4) if max(loads) else 0.0,
        }
    return result


def compare_verdicts(
    a: list[dict[str, Any]],
    b: list[dict[str, Any]],
    fields: tuple[str, ...] = VERDICT_FIELDS,
) -> dict[str, Any]:
    """Case by case, the outcomes of two runs on `fields`: {"compared", "differ": {case:
    {field: (a, b)}}, "only_in_a", "only_in_b"} (model/results.diff_outcomes)."""
    diff = diff_outcomes({o["case_id"]: o for o in a}, {o["case_id"]: o for o in b}, fields)
    return {
        "compared": diff.compared,
        "differ": diff.differ,
        "only_in_a": diff.only_before,
        "only_in_b": diff.only_after,
    }
