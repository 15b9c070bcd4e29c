"""The ratios between the timed phases: per round, their median over the rounds, and
the ones that moved too much between rounds to trust."""

from __future__ import annotations

import statistics
from typing import Any

# (key, faster phase, slower phase, label in the report)
RATIOS = (
    ("cold_vs_baseline", "cold", "baseline", "cold / baseline"),
    ("cold_vs_baseline_native", "cold", "baseline-native", "cold / baseline (native binaries)"),
    ("cold_unbatched_vs_baseline", "cold-unbatched", "baseline", "cold --batch-size 1 / baseline"),
    (
        "cold_unbatched_vs_baseline_native",
        "cold-unbatched",
        "baseline-native",
        "cold --batch-size 1 / baseline (native)",
    ),
    ("cold_vs_cold_unbatched", "cold", "cold-unbatched", "cold / cold --batch-size 1"),
    ("warm_vs_cold", "warm", "cold", "warm / cold"),
    ("warm_vs_baseline", "warm", "baseline", "warm / baseline"),
    ("nothreads_vs_cold", "cold-nothreads", "cold", "cold threading off / cold"),
)


def round_ratios(phases: dict[str, dict[str, Any]]) -> dict[str, float]:
    """cases/min ratios within one round, and the CPU-seconds ratios ("_cpu")."""
    ratios = {}
    for key, fast, slow, _ in RATIOS:
        f, sl = phases.get(fast), phases.get(slow)
        if f and sl and sl["cases_per_min"] > 0:
            ratios[key] = round(f["cases_per_min"] / sl["cases_per_min"], 2)
            if f["cpu_s"] > 0:
                ratios[key + "_cpu"] = round(sl["cpu_s"] / f["cpu_s"], 2)
    return ratios


def median_ratios(rounds: list[dict[str, float]]) -> dict[str, float]:
    keys = sorted({k for r in rounds for k in r})
    return {k: round(statistics.median(r[k] for r in rounds if k in r), 2) for k in keys}


def unstable_ratios(rounds: list[dict[str, Any]]) -> list[str]:
    """Ratios whose per-round values differ by more than 25%."""
    found = []
    for key, _, _, _ in RATIOS:
        values = [r.get("ratios", {}).get(key) for r in rounds]
        values = [v for v in values if v]
        if len(values) > 1 and max(values) > 1.25 * min(values):
            found.append(f"{key} {min(values):.2f}-{max(values):.2f}")
    return found
