"""One benchmark run, every measurement in order on the same sample: the timed rounds,
the figures read from them, the batching measurements, the in-process profile and
memory, the whole job; then the targets, the printed report and the ``--json`` file."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path
from typing import Any

from .baseline import iree_tools, plan_baseline
from .batch_size import measure_batch_rss
from .bisection import measure_bisection
from .machine import loadavg, machine_description
from .memory import MEMORY_CONFIGS, measure_memory
from .outcome_stats import overhead_stats, shard_balance
from .phases import Phase, empty_dir, log, pytest_overhead, run_round, summarize_round
from .pipeline_profile import fill_store, profile_cold, profile_warm
from .ratios import median_ratios
from .report import format_report
from .sample import ROOT, load_cases, pick
from .targets import judge
from .threads import threads_figures


def run_benchmark(args: argparse.Namespace, work_dir: Path) -> int:
    """Every part `args` does not skip; 2 when a timed phase could not run, else 0."""
    figures: dict[str, Any] = {
        "machine": machine_description(),
        "workers": args.workers,
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    onnx_ids, shlo_ids = pick(args.cases_file, args.onnx, args.stablehlo)
    case_ids = onnx_ids + shlo_ids
    cases_file = args.cases_file.resolve()
    figures["sample"] = {
        "onnx": len(onnx_ids),
        "stablehlo": len(shlo_ids),
        "file": str(
            cases_file.relative_to(ROOT) if cases_file.is_relative_to(ROOT) else cases_file
        ),
    }
    baselines = []
    if "baseline" not in args.skip:
        if args.baseline_tools in ("scripts", "both"):
            baselines.append(("baseline", iree_tools(args.iree_bin_dir)))
        if args.baseline_tools in ("native", "both"):
            baselines.append(("baseline-native", iree_tools(args.iree_bin_dir, native=True)))
        figures["baseline_tools"] = {name: tools for name, tools in baselines}
    plans = plan_baseline(case_ids, work_dir / "baseline") if baselines else []
    store = work_dir / "store"
    durations_file = work_dir / "durations.json"
    rounds: list[dict[str, Any]] = []
    last: dict[str, Phase] = {}
    for n in range(max(args.rounds, 1)):
        try:
            phases = run_round(
                case_ids,
                plans,
                baselines,
                work_dir,
                workers=args.workers,
                batch_size=args.batch_size,
                skip=args.skip,
                thread_flags=args.thread_flags.split(),
            )
        except RuntimeError as e:
            print(f"ERROR: {e}", file=sys.stderr)
            return 2
        summary = summarize_round(phases, case_ids)
        if "batched_vs_unbatched" in summary:
            figures["batched_vs_unbatched"] = summary["batched_vs_unbatched"]
        rounds.append(summary)
        last = phases
        log(
            f"round {n + 1}: "
            + ", ".join(
                f"{k} {v:.2f}x" for k, v in summary["ratios"].items() if not k.endswith("_cpu")
            )
        )
    figures["rounds"] = rounds
    figures["ratios"] = median_ratios([r["ratios"] for r in rounds])

    overhead: dict[str, Any] = {}
    for key in ("cold", "warm"):
        if key in last:
            overhead[key] = overhead_stats(last[key].outcomes)
            overhead[f"pytest_{key}"] = pytest_overhead(last[key], args.workers)
    figures["overhead"] = overhead
    if "cold" in last:
        figures["cold_batched_cases"] = sum(
            1 for o in last["cold"].outcomes if o.get("info", {}).get("batch")
        )
    if "threads" not in args.skip:
        figures["threads"] = threads_figures(work_dir, args.thread_flags.split())
    if durations_file.exists():
        figures["shards"] = shard_balance(json.loads(durations_file.read_text()))

    measure_batching(args, case_ids, work_dir, figures)
    measure_in_process(args, case_ids, work_dir, store, figures)
    if "whole-job" not in args.skip:
        measure_whole_job(work_dir, figures)

    figures["verdicts"] = judge(figures)
    figures["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    figures["loadavg_end"] = loadavg()
    print(format_report(figures), flush=True)
    if args.json:
        args.json.write_text(
            json.dumps(figures, indent=1, default=str), encoding="utf-8", newline="\n"
        )
    return 0


def measure_batching(
    args: argparse.Namespace, case_ids: list[str], work_dir: Path, figures: dict[str, Any]
) -> None:
    """The bisection cost and the batch-size measurement, into `figures`."""
    if "bisect" in args.skip and "batch-rss" in args.skip:
        return
    cases = load_cases(case_ids)
    if "bisect" not in args.skip:
        log(
            f"bisection: a batch of {args.bisect_size} StableHLO cases, clean and with one failing case"
        )
        figures["bisection"] = measure_bisection(cases, work_dir, args.bisect_size)
    if "batch-rss" not in args.skip:
        sizes = tuple(int(x) for x in args.rss_sizes.split(",") if x.strip())
        log(
            f"batch size: {args.rss_cases} cases compiled in batches of {sizes}, a fresh worker each"
        )
        figures["batch_rss"] = measure_batch_rss(cases, work_dir, sizes, args.rss_cases)


def measure_in_process(
    args: argparse.Namespace,
    case_ids: list[str],
    work_dir: Path,
    store: Path,
    figures: dict[str, Any],
) -> None:
    """The profiled pipeline and the worker's RSS over a long run, into `figures`; both
    need a warm store, which the cold phase filled (else it is filled here)."""
    profile = "profile" not in args.skip
    memory = "memory" not in args.skip and args.memory_jobs > 0
    if not (profile or memory):
        return
    cases = load_cases(case_ids)
    if not (store.exists() and any(store.iterdir())):
        log("filling the store for the in-process measurements")
        fill_store(cases, store, args.batch_size)
    if profile:
        log(f"profile: warm pipeline, {args.profile_rounds} round(s) over {len(cases)} cases")
        figures["profile"] = profile_warm(cases, store, args.profile_rounds, args.batch_size)
        figures["profile_rounds"] = args.profile_rounds
        if args.profile_cold > 0:
            log(f"profile: {args.profile_cold} cold cases in a started worker")
            figures["profile"]["cold"] = profile_cold(
                cases, work_dir / "profile-cold-store", args.profile_cold
            )
    if memory:
        log(f"memory: {args.memory_jobs} jobs per worker, recycling at 400 and off, side by side")
        figures["memory_jobs"] = args.memory_jobs
        figures["memory_cold_every"] = args.memory_cold_every
        figures["memory"] = measure_memory(
            cases, store, args.memory_jobs, args.memory_cold_every, MEMORY_CONFIGS
        )


def measure_whole_job(work_dir: Path, figures: dict[str, Any]) -> None:
    """whole_job.py's measurement (its own script too), printed as soon as it ends."""
    from benchmarks import whole_job

    log("whole job: pytest conformance -n auto --offline cold, warm, then two re-selections")
    figures["whole_job"] = whole_job.measure(
        [], empty_dir(work_dir / "whole-job"), dict(os.environ)
    )
    print("\n".join(whole_job.format_figures(figures["whole_job"])), flush=True)
