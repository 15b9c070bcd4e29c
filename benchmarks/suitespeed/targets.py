"""The issues' targets, checked against a benchmark's figures as ``MET`` / ``MISSED``
lines (issue 13: cold in CPU seconds, warm steady-state overhead)."""

from __future__ import annotations

from typing import Any

COLD_VS_BASELINE = 3.0
COLD_VS_NATIVE = 2.5
WARM_OVERHEAD_MS = 5.0
WARM_VS_COLD = 20.0
OVERHEAD_MS = 25.0
RSS_GROWTH_MB = 50.0
SHARD_SPREAD = 0.10


def verdict_line(name: str, ok: bool, detail: str) -> str:
    return f"{'MET   ' if ok else 'MISSED'} {name}: {detail}"


def judge(figures: dict[str, Any]) -> list[str]:
    """A MET / MISSED line for each target whose figures `figures` holds."""
    lines = []
    r = figures.get("ratios", {})
    for key, label, target, cpu_only in (
        ("cold_vs_baseline", f"cold >= {COLD_VS_BASELINE:g}x baseline", COLD_VS_BASELINE, True),
        (
            "cold_vs_baseline_native",
            f"cold >= {COLD_VS_NATIVE:g}x baseline with native binaries",
            COLD_VS_NATIVE,
            True,
        ),
        ("warm_vs_cold", "warm >= 20x cold", WARM_VS_COLD, False),
    ):
        if key + "_cpu" in r:
            lines.append(
                verdict_line(
                    f"{label}, CPU seconds",
                    r[key + "_cpu"] >= target,
                    f"{r[key + '_cpu']:.2f}x"
                    + (f" (cases/min {r[key]:.2f}x)" if cpu_only and key in r else ""),
                )
            )
        if key in r and not cpu_only:
            lines.append(verdict_line(f"{label}, cases/min", r[key] >= target, f"{r[key]:.2f}x"))
    same = figures.get("batched_vs_unbatched")
    if same is not None:
        identical = not same["differ"] and not same["only_in_a"] and not same["only_in_b"]
        shown = f": {dict(list(same['differ'].items())[:5])}" if same["differ"] else ""
        lines.append(
            verdict_line(
                "verdicts with batching identical to --batch-size 1 (status, stage, verdict)",
                identical,
                f"{same['compared']} cases compared, {len(same['differ'])} differ{shown}",
            )
        )
    prof = figures.get("profile", {}).get("parent", {})
    if prof.get("count"):
        worst = max(prof["mean_ms"], prof.get("loop_overhead_ms", 0.0))
        detail = f"mean {prof['mean_ms']:.2f} ms" + (
            f", {prof['loop_overhead_ms']:.2f} ms with the batch jobs"
            if "loop_overhead_ms" in prof
            else ""
        )
        lines.append(
            verdict_line(
                f"overhead < {WARM_OVERHEAD_MS:g} ms/case, warm steady state (profiled pipeline)",
                worst < WARM_OVERHEAD_MS,
                detail,
            )
        )
    cold = figures.get("profile", {}).get("cold", {})
    if cold.get("count"):
        lines.append(
            verdict_line(
                "overhead < 25 ms/case, cold steady state (started worker)",
                cold["mean_ms"] < OVERHEAD_MS,
                f"mean {cold['mean_ms']:.2f} ms",
            )
        )
    o = figures.get("overhead", {})
    for key in ("cold", "warm"):
        st = o.get(key)
        if st and st.get("count"):
            lines.append(
                verdict_line(
                    f"overhead < 25 ms/case, pytest {key} run (worker start-up included)",
                    st["mean_ms"] < OVERHEAD_MS,
                    f"mean {st['mean_ms']:.1f} ms, median {st['median_ms']:.1f} ms",
                )
            )
    for n, v in figures.get("shards", {}).items():
        lines.append(
            verdict_line(
                f"--shard I/{n} within 10% on recorded durations",
                v["spread"] <= SHARD_SPREAD,
                f"spread {100 * v['spread']:.1f}%",
            )
        )
    for label, v in figures.get("memory", {}).items():
        if "rss_growth_mb" in v:
            lines.append(
                verdict_line(
                    f"worker RSS growth <= 50 MB over {v['jobs']} jobs ({label})",
                    v["rss_growth_mb"] <= RSS_GROWTH_MB,
                    f"{v['rss_growth_mb']:+.0f} MB (job 100 -> {v['jobs']})",
                )
            )
    return lines
