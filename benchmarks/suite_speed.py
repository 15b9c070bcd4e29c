#!/usr/bin/env python3
"""Speed of the conformance suite against the way the IREE test suites drive IREE.

Runs, in one invocation and on the same fixed sample of cases (100 ONNX operator
tests + 20 bundled StableHLO cases by default, listed in
``benchmarks/suite_speed_cases.txt``):

1. baseline: per case ``iree-import-onnx``, ``iree-compile`` and ``iree-run-module``
   as separate processes, compiling with the suite's exact flags (``Target.case_flags``),
   inputs/outputs as .npy files, compared in numpy; two cases at a time (two worker
   processes: the same parallelism as ours); once with the pip tool scripts, once with
   the native binaries in the wheels;
2. ours, cold: ``pytest conformance -n 2`` on an empty artifact store (batched
   compilation at the default ``--batch-size``);
3. ours, cold-unbatched: the same with ``--batch-size 1``;
4. ours, warm: the same command as 2 on the store that 2 filled;
5. ours, cold-nothreads: 2 with ``--mlir-disable-threading`` in every worker's IREE
   global command line (``Session.set_flags`` does not take it);
6. the whole job (``whole_job.py``): ``pytest conformance -n auto --offline`` cold on an
   empty store, warm, then ``-k`` and ``--onnx-ops-sample 300`` re-selections on that
   store, with the cold run's profile table (skipped by ``--quick`` and
   ``--skip whole-job``);

then prints cases per minute, CPU seconds per case and the ratios, whether batching
changed any verdict (2 against 3, case by case), the overhead per case outside IREE's
own import/compile/load/run calls (from the results JSON and from a cProfile'd warm
pass of the pipeline, in batches), shard balance on the durations the cold run
recorded, the cost of bisecting a batch with one case that fails to compile, the CPU
seconds per case and the worker's peak RSS per batch size, and the RSS of a worker
process over a long run (1,000 jobs, warm and cold mixed, with and without the
worker's ``max_jobs`` recycling).

Targets are checked and printed as ``MET``/``MISSED`` lines; the script exits 0
either way (non-zero only when a phase could not run at all).

    python benchmarks/suite_speed.py                 # full run (~25-35 min on 2 cores)
    python benchmarks/suite_speed.py --onnx 40 --stablehlo 20   # a smaller sample
    python benchmarks/suite_speed.py --quick         # 10 + 5 cases, 100 memory jobs
    python benchmarks/suite_speed.py --select        # re-pick the case sample (slow)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

# The measurements live in the benchmarks.suitespeed package, one module each; this file
# is the command line. `python benchmarks/suite_speed.py` has benchmarks/ on sys.path, not
# the repository root, and the library may not be installed.
ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT / "python", ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from benchmarks.suitespeed.baseline import iree_tools  # noqa: E402
from benchmarks.suitespeed.batch_size import BATCH_RSS_SIZES  # noqa: E402
from benchmarks.suitespeed.report import format_report  # noqa: E402
from benchmarks.suitespeed.run import run_benchmark  # noqa: E402
from benchmarks.suitespeed.sample import DEFAULT_CASES_FILE, write_case_list  # noqa: E402
from benchmarks.suitespeed.selection import select_sample  # noqa: E402
from benchmarks.suitespeed.targets import judge  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    ap.add_argument(
        "--onnx", type=int, default=100, metavar="N", help="ONNX operator cases (default 100)"
    )
    ap.add_argument(
        "--stablehlo", type=int, default=20, metavar="N", help="StableHLO cases (default 20)"
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 10 + 5 cases, 100 memory jobs, 1 profile round, pip-script baseline only",
    )
    ap.add_argument(
        "--workers", type=int, default=2, help="cases at a time on every side (default 2)"
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="repeat baseline/cold/warm; ratios are the median of the rounds (default 1)",
    )
    ap.add_argument(
        "--baseline-tools",
        choices=["scripts", "native", "both"],
        default="both",
        help="baseline with the pip tool scripts on PATH, the native binaries in the wheels, or both (default both)",
    )
    ap.add_argument(
        "--cases-file",
        type=Path,
        default=DEFAULT_CASES_FILE,
        help=f"the sample (default {DEFAULT_CASES_FILE.relative_to(ROOT)})",
    )
    ap.add_argument(
        "--select",
        action="store_true",
        help="re-pick the sample (runs candidates through both sides) and write --cases-file, then stop",
    )
    ap.add_argument(
        "--select-factor",
        type=float,
        default=2.0,
        help="candidates per wanted case when selecting (default 2.0)",
    )
    ap.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=[
            "baseline",
            "cold",
            "cold-unbatched",
            "warm",
            "profile",
            "memory",
            "bisect",
            "batch-rss",
            "threads",
            "whole-job",
        ],
        help="leave a part out (repeatable)",
    )
    ap.add_argument(
        "--memory-jobs",
        type=int,
        default=1000,
        help="jobs per worker in the RSS measurement (default 1000)",
    )
    ap.add_argument(
        "--memory-cold-every",
        type=int,
        default=10,
        help="every N-th memory job compiles (a changed source); 0: all warm (default 10)",
    )
    ap.add_argument(
        "--profile-rounds",
        type=int,
        default=3,
        help="passes over the sample in the profiled warm pipeline (default 3)",
    )
    ap.add_argument(
        "--profile-cold",
        type=int,
        default=20,
        metavar="N",
        help="cold cases (spread over the sample) for the steady-state cold overhead; 0: none (default 20)",
    )
    ap.add_argument(
        "--batch-size",
        type=int,
        default=None,
        metavar="B",
        help="the suite's --batch-size in the cold and warm phases and the in-process profile (default: the suite's default, batching.DEFAULT_BATCH_SIZE)",
    )
    ap.add_argument(
        "--bisect-size",
        type=int,
        default=15,
        metavar="B",
        help="StableHLO cases in the bisection batch, beside the failing one (default 15)",
    )
    ap.add_argument(
        "--rss-cases",
        type=int,
        default=32,
        metavar="N",
        help="cases compiled per batch size in the batch-size measurement (default 32)",
    )
    ap.add_argument(
        "--rss-sizes",
        default=",".join(map(str, BATCH_RSS_SIZES)),
        metavar="LIST",
        help=f"batch sizes measured (default {','.join(map(str, BATCH_RSS_SIZES))})",
    )
    ap.add_argument(
        "--thread-flags",
        default="--mlir-disable-threading",
        metavar="FLAGS",
        help="IREE global command-line flags of the threads phase's workers (default --mlir-disable-threading)",
    )
    ap.add_argument(
        "--iree-bin-dir",
        type=Path,
        help="where iree-import-onnx, iree-compile, iree-run-module live (default: next to this Python, then PATH)",
    )
    ap.add_argument(
        "--work-dir",
        type=Path,
        help="keep stores, logs and results here (default: a temporary folder, removed)",
    )
    ap.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    ap.add_argument(
        "--report-from",
        type=Path,
        metavar="PATH",
        help="print the report of a saved --json file again (current format and targets), run nothing",
    )
    args = ap.parse_args(argv)
    if args.batch_size is None:
        from iree_conformance.engine.batching import DEFAULT_BATCH_SIZE

        args.batch_size = DEFAULT_BATCH_SIZE
    if args.quick:
        args.onnx, args.stablehlo = min(args.onnx, 10), min(args.stablehlo, 5)
        args.memory_jobs = min(args.memory_jobs, 100)
        args.profile_rounds = 1
        args.profile_cold = min(args.profile_cold, 4)
        args.bisect_size = min(args.bisect_size, 4)
        args.rss_cases = min(args.rss_cases, 8)
        if args.baseline_tools == "both":
            args.baseline_tools = "scripts"
        args.skip.append("whole-job")  # the whole main job takes 10-15 minutes
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.report_from:
        figures = json.loads(args.report_from.read_text())
        figures["verdicts"] = judge(figures)
        print(format_report(figures))
        return 0
    work_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="suite-speed-"))
    work_dir.mkdir(parents=True, exist_ok=True)
    try:
        if args.select:
            tools = iree_tools(args.iree_bin_dir)
            onnx_ids, shlo_ids, note = select_sample(
                args.onnx, args.stablehlo, args.workers, work_dir, tools, args.select_factor
            )
            write_case_list(args.cases_file, onnx_ids, shlo_ids, note)
            print(
                f"wrote {len(onnx_ids)} ONNX + {len(shlo_ids)} StableHLO cases to {args.cases_file}\n{note}"
            )
            return 0
        return run_benchmark(args, work_dir)
    finally:
        if args.work_dir is None:
            shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
