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
import concurrent.futures
import cProfile
import dataclasses
import datetime
import io
import itertools
import json
import math
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

from iree_conformance.common.vocabulary import Status  # noqa: E402
from iree_conformance.model.results import VERDICT_FIELDS, diff_outcomes  # noqa: E402

if str(ROOT / "benchmarks") not in sys.path:  # the sibling modules below
    sys.path.insert(0, str(ROOT / "benchmarks"))

from baseline import (  # noqa: E402, F401 (re-exported for the tests)
    EXE,
    BaselinePlan,
    entry_from_mlir,
    iree_tools,
    numpy_compare,
    plan_baseline,
    run_baseline_case,
)
from sample import (  # noqa: E402, F401
    CONFORMANCE,
    DEFAULT_CASES_FILE,
    ONNX_PREFIX,
    STABLEHLO_PREFIX,
    TARGET,
    _target,
    hashed_order,
    load_cases,
    onnx_data_root,
    onnx_index,
    read_case_list,
    stablehlo_index,
    write_case_list,
)

PYTEST_PATHS = ("conformance/test_conformance.py", "-m", "onnx_ops or stablehlo")
IREE_STAGES = ("import", "compile", "load", "run")

# The issues' targets (issue 13: cold in CPU seconds, warm steady-state overhead).
COLD_VS_BASELINE = 3.0
COLD_VS_NATIVE = 2.5
WARM_OVERHEAD_MS = 5.0
WARM_VS_COLD = 20.0
OVERHEAD_MS = 25.0
RSS_GROWTH_MB = 50.0
SHARD_SPREAD = 0.10


def log(message: str) -> None:
    print(f"... {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Machine and versions
# ---------------------------------------------------------------------------
def machine_description() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    versions = {}
    for dist in (
        "iree-base-compiler",
        "iree-base-runtime",
        "onnx",
        "numpy",
        "pytest",
        "pytest-xdist",
    ):
        try:
            from importlib.metadata import version

            versions[dist] = version(dist)
        except Exception:  # noqa: BLE001 - informational only
            versions[dist] = "?"
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gib": ram_gib,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": versions,
        "loadavg_start": _loadavg(),
        "children_cpu": counts_children_cpu(),
    }


def _loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def children_cpu() -> float:
    """User+system CPU seconds of all waited-for descendants so far; 0.0 where the OS
    does not count them (Windows has no ``resource`` module): CPU ratios are then left
    out and the report says so."""
    try:
        import resource
    except ImportError:
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def counts_children_cpu() -> bool:
    try:
        import resource  # noqa: F401
    except ImportError:
        return False
    return True


@dataclasses.dataclass
class Phase:
    name: str
    cases: int
    wall: float
    cpu: float
    outcomes: list[dict[str, Any]]
    loadavg: list[float]
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def passed(self) -> int:
        return sum(1 for o in self.outcomes if o.get("status") == "pass")

    @property
    def cases_per_min(self) -> float:
        return 60.0 * self.cases / self.wall if self.wall > 0 else 0.0

    @property
    def cpu_per_case(self) -> float:
        return self.cpu / self.cases if self.cases else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "passed": self.passed,
            "wall_s": round(self.wall, 2),
            "cases_per_min": round(self.cases_per_min, 1),
            "cpu_s": round(self.cpu, 2),
            "cpu_s_per_case": round(self.cpu_per_case, 3),
            "loadavg_after": self.loadavg,
            **self.extra,
        }


def run_baseline(
    plans: list[BaselinePlan], workers: int, tools: dict[str, str], name: str = "baseline"
) -> Phase:
    log(
        f"{name}: {len(plans)} cases, {workers} worker processes, one process per tool ({tools['compile']})"
    )
    cpu0, t0 = children_cpu(), time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(run_baseline_case, plans, itertools.repeat(tools)))
    wall = time.perf_counter() - t0
    return Phase(name, len(plans), wall, children_cpu() - cpu0, outcomes, _loadavg())


# ---------------------------------------------------------------------------
# Ours: the pytest suite
# ---------------------------------------------------------------------------
def run_ours(
    name: str,
    case_ids: list[str],
    store_dir: Path,
    work_dir: Path,
    workers: int,
    durations_file: Path | None = None,
    extra_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Phase:
    cases_file = work_dir / "cases.txt"
    cases_file.write_text("\n".join(case_ids) + "\n", encoding="utf-8", newline="\n")
    report = work_dir / f"{name}.json"
    log_path = work_dir / f"{name}.log"
    cmd = [
        sys.executable, "-m", "pytest", *PYTEST_PATHS,
        "-n", str(workers), "-p", "no:cacheprovider",
        "--store-dir", str(store_dir), "--cases-file", str(cases_file),
        "--report-json", str(report), "-q", *extra_args,
    ]  # fmt: skip
    if durations_file is not None:
        cmd += ["--record-durations", str(durations_file)]
    log(
        f"{name}: {len(case_ids)} cases, pytest -n {workers} {' '.join(extra_args)}, store {store_dir}"
    )
    report.unlink(missing_ok=True)
    cpu0, t0 = children_cpu(), time.perf_counter()
    with open(log_path, "wb") as out:
        rc = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env).returncode
    wall = time.perf_counter() - t0
    cpu = children_cpu() - cpu0
    if not report.exists():
        raise RuntimeError(
            f"{name}: pytest exited {rc} without a results JSON; see {log_path}:\n{log_path.read_text(errors='replace')[-3000:]}"
        )
    outcomes = json.loads(report.read_text())["outcomes"]
    if len(outcomes) != len(case_ids):
        log(
            f"{name}: {len(outcomes)} outcomes for {len(case_ids)} cases (pytest rc {rc}); see {log_path}"
        )
    return Phase(name, len(case_ids), wall, cpu, outcomes, _loadavg(), {"pytest_rc": rc})


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


def shard_balance(durations: dict[str, float], counts=(2, 3, 4)) -> dict[int, dict[str, float]]:
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


# ---------------------------------------------------------------------------
# In-process pieces: cases, a WorkerClient, profiles, memory
# ---------------------------------------------------------------------------


def read_proc_status(pid: int) -> dict[str, int]:
    """VmRSS / VmHWM (bytes) of a process from /proc; {} when unavailable."""
    result = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                result[key] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return result


def _worker_pid(client: Any) -> int | None:
    proc = getattr(client, "_proc", None)
    return proc.pid if proc is not None and proc.poll() is None else None


def cold_variant(case: Any, nonce: str) -> Any:
    """The same case with source bytes that hash differently (so it compiles again)."""
    source = case.source_path.read_bytes()
    if case.kind == "onnx":
        import onnx

        model = onnx.ModelProto()
        model.ParseFromString(source)
        model.doc_string = f"suite_speed {nonce}"
        source = model.SerializeToString()
    else:
        source = source + f"\n// suite_speed {nonce}\n".encode()
    return dataclasses.replace(case, source_bytes=source)


def measure_memory(
    cases: list[Any], store_dir: Path, jobs: int, cold_every: int, configs: dict[str, int | None]
) -> dict[str, Any]:
    """Drives one WorkerClient per config (side by side, in threads) with `jobs` jobs."""
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient

    target = _target()
    results: dict[str, Any] = {}

    def drive(label: str, max_jobs: int | None) -> None:
        client = WorkerClient(store_dir, max_jobs=max_jobs if max_jobs else 10**9)
        samples: list[dict[str, Any]] = []
        statuses: dict[str, int] = {}
        pids: list[int] = []
        t0 = time.perf_counter()
        try:
            for i in range(jobs):
                case = cases[i % len(cases)]
                cold = cold_every > 0 and i % cold_every == cold_every - 1
                job_case = cold_variant(case, f"{label}-{i}") if cold else case
                outcome, _ = run_case(Attempt(job_case, target), client)
                statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
                pid = _worker_pid(client)
                if pid is not None and (not pids or pids[-1] != pid):
                    pids.append(pid)
                status = read_proc_status(pid) if pid else {}
                samples.append(
                    {
                        "job": i + 1,
                        "pid": pid,
                        "rss": status.get("VmRSS"),
                        "hwm": status.get("VmHWM"),
                        "cold": cold,
                    }
                )
        finally:
            client.close()
        results[label] = {
            "samples": samples,
            "statuses": statuses,
            "pids": pids,
            "wall_s": time.perf_counter() - t0,
            "max_jobs": max_jobs,
        }

    threads = [
        threading.Thread(target=drive, args=(label, m), name=f"memory-{label}")
        for label, m in configs.items()
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {label: summarize_memory(r) for label, r in results.items()}


def summarize_memory(r: dict[str, Any]) -> dict[str, Any]:
    samples = [s for s in r["samples"] if s["rss"]]
    if not samples:
        return {"error": "no RSS samples (no /proc?)", "statuses": r["statuses"]}
    mb = 1 / 2**20

    def at(job: int) -> dict[str, Any]:
        best = min(samples, key=lambda s: abs(s["job"] - job))
        return best

    early = at(min(100, len(r["samples"])))
    last = samples[-1]
    return {
        "max_jobs": r["max_jobs"],
        "jobs": len(r["samples"]),
        "worker_processes": len(r["pids"]),
        "statuses": r["statuses"],
        "wall_s": round(r["wall_s"], 1),
        "rss_mb_at_100": round(early["rss"] * mb, 1),
        "rss_mb_at_end": round(last["rss"] * mb, 1),
        "rss_growth_mb": round((last["rss"] - early["rss"]) * mb, 1),
        "hwm_mb_at_100": round(early["hwm"] * mb, 1),
        "hwm_mb_at_end": round(last["hwm"] * mb, 1),
        "hwm_growth_mb": round((last["hwm"] - early["hwm"]) * mb, 1)
        if early["pid"] == last["pid"]
        else None,
        "peak_hwm_mb": round(max(s["hwm"] for s in samples) * mb, 1),
        "rss_mb_every_100": [round(s["rss"] * mb) for s in samples if s["job"] % 100 == 0],
    }


def _top_functions(profile: cProfile.Profile, limit: int, sort: str = "tottime") -> list[str]:
    stream = io.StringIO()
    stats = pstats.Stats(profile, stream=stream)
    stats.sort_stats(sort).print_stats(limit)
    lines = stream.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("ncalls")), 0)
    return [line.rstrip() for line in lines[start:] if line.strip()]


def run_batched(
    case: Any, target: Any, client: Any, plan: dict[tuple[str, str], Any], coordinator: Any
) -> Any:
    """One case as the pytest plugin runs it: in its planned batch (compiled, or found in
    the store, once per coordinator), else alone."""
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case

    batch = plan.get((target.name, case.case_id))
    placement = coordinator.placement(batch, case, target, client) if batch is not None else None
    return run_case(Attempt(case, target, placement=placement), client)[0]


def profile_warm(cases: list[Any], store_dir: Path, rounds: int, batch_size: int) -> dict[str, Any]:
    """A warm pass of the pipeline through a real WorkerClient, parent side under
    cProfile; then the worker's Executor in-process under cProfile. Cases run in their
    batches, as in the pytest run whose store this is: each round has a fresh
    BatchCoordinator, as each pytest process has, so it finds every batch in the store
    once (the batch job: member keys and imported modules read, the batch's module read)."""
    from iree_conformance.common.store import ArtifactStore
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.batching import BatchCoordinator, batch_job, plan_batches
    from iree_conformance.engine.pipeline import build_job
    from iree_conformance.engine.worker.executor import Executor
    from iree_conformance.engine.worker.parent import WorkerClient

    target = _target()
    plan = plan_batches([(case, target) for case in cases], batch_size)
    client = WorkerClient(store_dir)
    try:
        t = time.perf_counter()
        client._start()  # the one-off start of a worker, timed apart from the cases
        start_s = time.perf_counter() - t
        t = time.perf_counter()
        warm_up = BatchCoordinator()
        for case in cases[:2]:  # first-use costs: imports, runtime instance, device
            run_batched(case, target, client, plan, warm_up)
        first_use_s = round(time.perf_counter() - t, 3)
        profile = cProfile.Profile()
        outcomes = []
        compiles = 0
        t = time.perf_counter()
        profile.enable()
        for _ in range(rounds):
            coordinator = BatchCoordinator()
            for case in cases:
                outcomes.append(run_batched(case, target, client, plan, coordinator).to_json())
            compiles += coordinator.compiles
        profile.disable()
        loop_s = time.perf_counter() - t
    finally:
        client.close()
    parent = overhead_stats(outcomes)
    parent["loop_s"] = round(loop_s, 3)
    parent["worker_start_s"] = round(start_s, 3)
    parent["first_use_s"] = first_use_s
    parent["statuses"] = {
        s: sum(1 for o in outcomes if o["status"] == s) for s in {o["status"] for o in outcomes}
    }
    parent["batched"] = sum(1 for o in outcomes if o.get("info", {}).get("batch")) // max(rounds, 1)
    parent["batch_jobs_per_round"] = compiles // max(rounds, 1)
    if outcomes and parent.get("count"):
        # The loop's time per case, batch jobs included (a case's own duration leaves out
        # its batch's store lookup, which runs before it), less IREE's load and run.
        parent["loop_overhead_ms"] = round(
            1000.0 * (loop_s / len(outcomes) - parent["iree_s_mean"]), 2
        )
    parent["compiled"] = sum(1 for o in outcomes if "compile" in o.get("stage_times", {}))

    # Worker side, in this process: the same jobs straight into an Executor (each
    # round: every batch job once, then each case's job, in its batch where it has one).
    executor = Executor(ArtifactStore(store_dir), lambda: "")
    jobs = [
        (
            case,
            build_job(Attempt(case, target), case.input_sets()),
            plan.get((target.name, case.case_id)),
        )
        for case in cases
    ]

    def worker_round() -> None:
        keys: dict[str, tuple[str | None, list[str]]] = {}
        for case, job, batch in jobs:
            if batch is not None:
                if batch.batch_id not in keys:
                    r = executor.execute(batch_job(batch.cases, target), lambda stage: None)
                    keys[batch.batch_id] = (
                        r.batch_key if r.status == Status.PASS else None,
                        list(r.placed),
                    )
                key, placed = keys[batch.batch_id]
                job = (
                    dataclasses.replace(job, batch_key=key)
                    if key and case.case_id in placed
                    else job
                )
            executor.execute(job, lambda stage: None)

    worker_round()  # first use
    wprofile = cProfile.Profile()
    t = time.perf_counter()
    wprofile.enable()
    for _ in range(rounds):
        worker_round()
    wprofile.disable()
    worker_ms = 1000.0 * (time.perf_counter() - t) / (rounds * len(jobs))
    return {
        "parent": parent,
        "parent_top": _top_functions(profile, 14),
        "worker_ms_per_job": round(worker_ms, 2),
        "worker_top": _top_functions(wprofile, 14),
    }


def profile_cold(cases: list[Any], store_dir: Path, count: int) -> dict[str, Any]:
    """Overhead of cold cases in a started worker: `count` cases spread over the
    sample, compiled into an empty store after one warm-up compile (which pays the
    one-off imports of the compiler and onnx)."""
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient

    picked = cases[:: max(1, len(cases) // count)][:count]
    target = _target()
    shutil.rmtree(store_dir, ignore_errors=True)
    client = WorkerClient(store_dir)
    outcomes = []
    try:
        run_case(Attempt(cold_variant(picked[0], "warm-up"), target), client)
        for case in picked:
            outcome, _ = run_case(Attempt(case, target), client)
            outcomes.append(outcome.to_json())
    finally:
        client.close()
        shutil.rmtree(store_dir, ignore_errors=True)
    stats = overhead_stats(outcomes)
    stats["statuses"] = {
        s: sum(1 for o in outcomes if o["status"] == s) for s in {o["status"] for o in outcomes}
    }
    return stats


# ---------------------------------------------------------------------------
# Batching: bisection cost, peak RSS and CPU per batch size, MLIR threading
# ---------------------------------------------------------------------------
# A module that parses and survives the check rewrite and the merge, and that IREE
# rejects when it compiles it: an unknown custom call has no lowering.
FAILING_MLIR = """module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @suite_speed_no_such_target(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
BATCH_RSS_SIZES = (1, 4, 8, 16, 32)
# Marks the worker processes of the MLIR-threading phase (see threads_env).
_WORKER_LOG_PREFIX = "iree-conformance-worker-"
_SITECUSTOMIZE = '''"""suite_speed.py's threads phase: IREE's global command line in the suite's workers."""
import os
import sys

_flags = os.environ.get("SUITE_SPEED_IREE_GLOBAL_FLAGS", "").split()
# A worker is `python -m iree_conformance.engine.worker.main LOG STORE`, LOG from tempfile.
if _flags and len(sys.argv) > 1 and sys.argv[0] == "-m" and os.path.basename(sys.argv[1]).startswith("@PREFIX@"):
    from iree.compiler.api import ctypes_dl

    ctypes_dl._init_dylib()
    ctypes_dl._initializeGlobalCL("iree-conformance-worker", *_flags)
    _marks = os.environ.get("SUITE_SPEED_IREE_GLOBAL_MARKS")
    if _marks:  # one file per worker that took the flags
        open(os.path.join(_marks, str(os.getpid())), "w").close()
'''.replace("@PREFIX@", _WORKER_LOG_PREFIX)


def parse_proc_stat_cpu(text: str, ticks_per_s: float) -> float:
    """User+system CPU seconds of a process from the text of /proc/<pid>/stat (fields
    14 and 15, counted after the parenthesised command name, which may hold spaces)."""
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / ticks_per_s


def process_cpu(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        return parse_proc_stat_cpu(Path(f"/proc/{pid}/stat").read_text(), os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def largest_group(cases: list[Any], kind: str | None = None) -> list[Any]:
    """The sample's cases that may share a module (one suite, kind and flag set), biggest
    group (of that source kind when given)."""
    from iree_conformance.engine.batching import group_key

    target = _target()
    groups: dict[tuple[str, ...], list[Any]] = {}
    for case in cases:
        if case.batchable and not case.skip_reason_for(target) and kind in (None, case.kind):
            groups.setdefault(group_key(case, target), []).append(case)
    return max(groups.values(), key=len) if groups else []


class _NoCulprits:
    """A WorkerClient whose batch results name no culprit: the coordinator must bisect."""

    def __init__(self, client: Any):
        self.client = client

    def execute(self, job: Any) -> Any:
        result = self.client.execute(job)
        return dataclasses.replace(result, culprits=[]) if hasattr(result, "culprits") else result


def failing_case(like: Any, directory: Path) -> Any:
    """A case of `like`'s suite and kind whose module IREE rejects at compile."""
    path = directory / "suite_speed_failing.mlir"
    path.write_text(FAILING_MLIR, encoding="utf-8", newline="\n")
    prefix = like.case_id.rsplit("/", 1)[0]
    return dataclasses.replace(
        like, case_id=f"{prefix}/zz_suite_speed_failing", source_path=path, source_bytes=None
    )


def measure_bisection(cases: list[Any], work_dir: Path, size: int) -> dict[str, Any]:
    """A batch of `size` cases of one group, compiled through a BatchCoordinator and a real
    WorkerClient: without a failing member, with one (the compiler's errors may name it),
    and with one while the culprits are hidden (plain bisection). Fresh worker and empty
    store for each; the worker is warmed up first with an unrelated compile."""
    from iree_conformance.engine.attempt import Attempt, AttemptSettings
    from iree_conformance.engine.batching import Batch, BatchCoordinator
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient

    group = largest_group(cases, kind="mlir")  # the failing member is an MLIR module
    if len(group) < 2:
        return {"error": "no two StableHLO cases of the sample share a module"}
    target = _target()
    members = group[: max(2, size)]
    bad_dir = work_dir / "bisect-source"
    bad_dir.mkdir(parents=True, exist_ok=True)
    bad = failing_case(members[0], bad_dir)
    variants = {
        "clean": (members, False),
        "one failing": ([*members[: len(members) // 2], bad, *members[len(members) // 2 :]], False),
        "one failing, culprits hidden": (
            [*members[: len(members) // 2], bad, *members[len(members) // 2 :]],
            True,
        ),
    }
    result: dict[str, Any] = {"group_cases": len(group), "size": len(members)}
    for label, (batch_cases, hide) in variants.items():
        store = work_dir / "bisect-store"
        shutil.rmtree(store, ignore_errors=True)
        client = WorkerClient(store)
        try:
            run_case(
                Attempt(
                    cold_variant(group[-1], f"bisect-warm-up-{label}"),
                    target,
                    AttemptSettings(compile_only=True),
                ),
                client,
            )
            pid = _worker_pid(client)
            cpu0, t0 = process_cpu(pid), time.perf_counter()
            coordinator = BatchCoordinator()
            batch = Batch(f"bench-{label}", target.name, tuple(batch_cases))
            placed = coordinator._compile(
                list(batch.cases), target, _NoCulprits(client) if hide else client
            )
            wall = time.perf_counter() - t0
            cpu1 = process_cpu(_worker_pid(client))
            same_worker = _worker_pid(client) == pid
        finally:
            client.close()
            shutil.rmtree(store, ignore_errors=True)
        result[label] = {
            "cases": len(batch_cases),
            "batch_compiles": coordinator.compiles,
            "placed": len(placed),
            "failing_placed": bad.case_id in placed,
            "wall_s": round(wall, 2),
            "worker_cpu_s": round(cpu1 - cpu0, 2)
            if cpu0 is not None and cpu1 is not None and same_worker
            else None,
        }
    clean = result["clean"]
    for label in ("one failing", "one failing, culprits hidden"):
        r = result[label]
        r["wall_vs_clean"] = round(r["wall_s"] / clean["wall_s"], 2) if clean["wall_s"] else None
        if r["worker_cpu_s"] is not None and clean["worker_cpu_s"]:
            r["cpu_vs_clean"] = round(r["worker_cpu_s"] / clean["worker_cpu_s"], 2)
    return result


def measure_batch_rss(
    cases: list[Any], work_dir: Path, sizes: tuple[int, ...], count: int
) -> dict[str, Any]:
    """The same `count` cases of one group compiled (compile only) in batches of each size,
    a fresh worker and an empty store per size: the worker's CPU seconds per case and its
    peak RSS (VmHWM). Size 1 compiles each case alone, as --batch-size 1 does."""
    from iree_conformance.engine.attempt import Attempt, AttemptSettings
    from iree_conformance.engine.batching import batch_job
    from iree_conformance.engine.pipeline import build_job
    from iree_conformance.engine.worker.parent import WorkerClient

    group = largest_group(cases)[:count]
    if not group:
        return {"error": "no batchable cases in the sample"}
    target = _target()
    rows: dict[int, dict[str, Any]] = {}
    for size in sizes:
        if size > len(group):
            continue
        store = work_dir / f"rss-store-{size}"
        shutil.rmtree(store, ignore_errors=True)
        client = WorkerClient(store)
        statuses: dict[str, int] = {}
        try:
            client._start()
            pid = _worker_pid(client)
            base = read_proc_status(pid) if pid else {}
            cpu0, t0 = process_cpu(pid), time.perf_counter()
            for start in range(0, len(group), size):
                chunk = group[start : start + size]
                if len(chunk) == 1:
                    job = build_job(
                        Attempt(chunk[0], target, AttemptSettings(compile_only=True)), []
                    )
                else:
                    job = batch_job(chunk, target)
                status = client.execute(job).status
                statuses[status] = statuses.get(status, 0) + 1
            wall = time.perf_counter() - t0
            now = _worker_pid(client)
            cpu1 = process_cpu(now) if now == pid else None
            mem = read_proc_status(pid) if now == pid else {}
        finally:
            client.close()
            shutil.rmtree(store, ignore_errors=True)
        n = len(group)
        rows[size] = {
            "cases": n,
            "batches": math.ceil(n / size),
            "statuses": statuses,
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu1 - cpu0, 2) if cpu0 is not None and cpu1 is not None else None,
            "cpu_s_per_case": round((cpu1 - cpu0) / n, 3)
            if cpu0 is not None and cpu1 is not None
            else None,
            "rss_mb_started": round(base.get("VmRSS", 0) / 2**20, 1),
            "peak_rss_mb": round(mem["VmHWM"] / 2**20, 1) if "VmHWM" in mem else None,
        }
    return {"cases": len(group), "sizes": rows, "choice": choose_batch_size(rows)}


def choose_batch_size(
    rows: dict[int, dict[str, Any]], cpu_slack: float = 0.05, rss_limit_mb: float = 1024.0
) -> dict[str, Any]:
    """The smallest batch size whose CPU seconds per case is within `cpu_slack` of the
    best size's, among the sizes whose worker peak RSS stays under `rss_limit_mb`: past
    that point a bigger batch saves no time and costs memory (and a bigger bisection)."""
    ok = {
        s: r
        for s, r in rows.items()
        if r.get("cpu_s_per_case") is not None and (r.get("peak_rss_mb") or 0) <= rss_limit_mb
    }
    if not ok:
        return {}
    best = min(r["cpu_s_per_case"] for r in ok.values())
    size = min(s for s, r in ok.items() if r["cpu_s_per_case"] <= best * (1 + cpu_slack))
    fastest = min(ok, key=lambda s: ok[s]["cpu_s_per_case"])
    return {"size": size, "fastest": fastest, "cpu_slack": cpu_slack, "rss_limit_mb": rss_limit_mb}


def threads_env(work_dir: Path, flags: list[str]) -> dict[str, str]:
    """The environment that gives the suite's worker processes (only them) IREE's global
    command-line flags: `--mlir-disable-threading` is a global MLIR option, which
    ``Session.set_flags`` rejects ("option not found"), so a per-target compile flag
    cannot carry it."""
    site = work_dir / "threads-site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8", newline="\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(site) + os.pathsep + env.get("PYTHONPATH", "")
    env["SUITE_SPEED_IREE_GLOBAL_FLAGS"] = " ".join(flags)
    marks = work_dir / "threads-marks"
    shutil.rmtree(marks, ignore_errors=True)
    marks.mkdir()
    env["SUITE_SPEED_IREE_GLOBAL_MARKS"] = str(marks)
    return env


def session_flag_accepted(flag: str) -> bool | str:
    """Whether ``iree.compiler.api.Session.set_flags`` takes `flag`; the error otherwise."""
    from iree.compiler.api import Session

    try:
        Session().set_flags(flag)
        return True
    except ValueError as e:
        return str(e).strip().splitlines()[-1].strip()


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


# ---------------------------------------------------------------------------
# Selection of the sample
# ---------------------------------------------------------------------------
def select_sample(
    n_onnx: int, n_shlo: int, workers: int, work_dir: Path, tools: dict[str, str], factor: float
) -> tuple[list[str], list[str], str]:
    """Candidates in hashed order; keep the first that pass in ours and in the baseline."""
    onnx_all = [cid for cid, c in onnx_index(onnx_data_root()).items() if not c.unsupported_reason]
    shlo_all = list(stablehlo_index())
    onnx_cand = hashed_order(onnx_all)[: math.ceil(n_onnx * factor)]
    shlo_cand = hashed_order(shlo_all)[: math.ceil(n_shlo * factor)]
    candidates = onnx_cand + shlo_cand
    sel_dir = work_dir / "select"
    sel_dir.mkdir(parents=True, exist_ok=True)
    ours = run_ours("select", candidates, sel_dir / "store", sel_dir, workers)
    ours_pass = {o["case_id"] for o in ours.outcomes if o["status"] == Status.PASS}
    plans = plan_baseline([c for c in candidates if c in ours_pass], sel_dir / "baseline")
    base = run_baseline(plans, workers, tools)
    both = {o["case_id"] for o in base.outcomes if o["status"] == Status.PASS}
    onnx_ids = [c for c in onnx_cand if c in both][:n_onnx]
    shlo_ids = [c for c in shlo_cand if c in both][:n_shlo]
    base_fail = sorted(c for c in ours_pass - both)
    note = (
        f"selected {datetime.date.today()}: {len(onnx_cand)} ONNX + {len(shlo_cand)} StableHLO candidates, "
        f"{len(ours_pass)} passed in the suite, {len(both)} also in the baseline"
        + (
            f" (baseline-only failures: {', '.join(base_fail[:6])}{' ...' if len(base_fail) > 6 else ''})"
            if base_fail
            else ""
        )
    )
    if len(onnx_ids) < n_onnx or len(shlo_ids) < n_shlo:
        log(
            f"only {len(onnx_ids)} ONNX and {len(shlo_ids)} StableHLO candidates passed; raise --select-factor"
        )
    return onnx_ids, shlo_ids, note


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------
PHASE_LABELS = {
    "baseline": "baseline, pip tool scripts",
    "baseline-native": "baseline, native binaries",
    "cold": "ours cold (empty store)",
    "cold-unbatched": "ours cold, --batch-size 1",
    "warm": "ours warm (filled store)",
    "cold-nothreads": "ours cold, MLIR threading off",
}
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


def verdict_line(name: str, ok: bool, detail: str) -> str:
    return f"{'MET   ' if ok else 'MISSED'} {name}: {detail}"


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


def format_report(figures: dict[str, Any]) -> str:
    out: list[str] = []
    m = figures["machine"]
    out.append("== Machine")
    out.append(
        f"nproc {m['nproc']}, {m['cpu']}, {m['ram_gib']} GiB RAM, {m['platform']}, Python {m['python']}"
    )
    out.append("versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    out.append(
        f"load average at start: {m['loadavg_start']} (shared machine: read the ratios, not absolute times)"
    )
    if not m.get("children_cpu", True):
        out.append(
            "CPU seconds: not measured on this OS (no resource.RUSAGE_CHILDREN); CPU ratios are left out"
        )
    s = figures["sample"]
    out.append(
        f"sample: {s['onnx']} ONNX operator cases + {s['stablehlo']} StableHLO cases from {s['file']}; {figures['workers']} cases at a time on every side"
    )
    rounds = figures.get("rounds", [])
    if rounds:
        out.append("")
        out.append(
            "== Throughput (wall clock of the whole run; CPU = user+sys of all its processes)"
        )
        out.append(
            f"{'phase':<32}{'cases':>6}{'pass':>6}{'wall s':>9}{'cases/min':>11}{'CPU s':>9}{'CPU s/case':>12}  load after"
        )
        for n, phases in enumerate(rounds):
            if len(rounds) > 1:
                out.append(f"-- round {n + 1}")
            for key, label in PHASE_LABELS.items():
                p = phases.get(key)
                if p:
                    out.append(
                        f"{label:<32}{p['cases']:>6}{p['passed']:>6}{p['wall_s']:>9.1f}{p['cases_per_min']:>11.1f}{p['cpu_s']:>9.1f}{p['cpu_s_per_case']:>12.3f}  {p['loadavg_after']}"
                    )
        last = rounds[-1]
        for key in PHASE_LABELS:
            st = last.get(key, {}).get("stage_mean_s")
            if st:
                out.append(
                    f"{key} mean s/case by stage: "
                    + ", ".join(f"{k} {v:.3f}" for k, v in st.items() if v)
                )
        if last.get("mismatches"):
            out.append(f"verdicts differ between phases: {last['mismatches']}")
    r = figures.get("ratios", {})
    if r:
        out.append("")
        title = (
            "== Ratios of cases/min"
            + (f" (median of {len(rounds)} rounds)" if len(rounds) > 1 else "")
            + "; CPU-seconds ratio in brackets"
        )
        out.append(title)
        for key, _, _, label in RATIOS:
            if key in r:
                line = (
                    f"{label:<36} {r[key]:>7.2f}x   [CPU {r.get(key + '_cpu', float('nan')):.2f}x]"
                )
                if len(rounds) > 1:
                    per_round = [
                        x["ratios"].get(key)
                        for x in rounds
                        if x.get("ratios", {}).get(key) is not None
                    ]
                    per_round_cpu = [
                        x["ratios"].get(key + "_cpu")
                        for x in rounds
                        if x.get("ratios", {}).get(key + "_cpu") is not None
                    ]
                    line += f"   rounds: {', '.join(f'{v:.2f}' for v in per_round)} [CPU {', '.join(f'{v:.2f}' for v in per_round_cpu)}]"
                out.append(line)
        spread = unstable_ratios(rounds)
        if spread:
            out.append(
                f"NOTE: the cases/min ratios moved by more than 25% between rounds ({', '.join(spread)}): the machine's load changed under the phases; the CPU-seconds ratios are the steadier figure."
            )
    o = figures.get("overhead", {})
    if o:
        out.append("")
        out.append(
            "== Overhead per case outside IREE's import/compile/load/run (ms), from the results JSON"
        )
        for key in ("cold", "warm"):
            st = o.get(key)
            if st and st.get("count"):
                out.append(
                    f"{key}: mean {st['mean_ms']:.1f}, median {st['median_ms']:.1f}, p90 {st['p90_ms']:.1f}, max {st['max_ms']:.1f} over {st['count']} cases"
                )
                out.append(
                    "   split (mean ms/case): "
                    + ", ".join(f"{k} {v:.2f}" for k, v in st["split_ms_mean"].items())
                )
        for key in ("cold", "warm"):
            p = o.get(f"pytest_{key}")
            if p:
                out.append(
                    f"pytest {key}: wall/case {p['wall_per_case_ms']:.0f} ms; wall - sum(case durations)/workers = "
                    f"{p['fixed_s']:.1f} s outside cases (pytest start, collection, xdist, teardown, batch jobs) = {p['fixed_per_case_ms']:.0f} ms/case"
                )
    pr = figures.get("profile")
    if pr:
        p = pr["parent"]
        out.append("")
        out.append("== Profile: warm pipeline through one WorkerClient, steady state (cProfile)")
        out.append(
            f"worker process start: {p['worker_start_s']:.2f} s; first two cases (runtime import, device): {p['first_use_s']:.2f} s; once per pytest worker"
        )
        if p.get("count"):
            out.append(
                f"per case: duration {1000 * p['duration_s_mean']:.2f} ms, of which IREE load+run {1000 * p['iree_s_mean']:.2f} ms; "
                f"overhead mean {p['mean_ms']:.2f} / median {p['median_ms']:.2f} / p90 {p['p90_ms']:.2f} ms"
            )
            out.append(
                "split (mean ms/case): "
                + ", ".join(f"{k} {v:.2f}" for k, v in p["split_ms_mean"].items())
            )
            if "loop_overhead_ms" in p:
                out.append(
                    f"in batches: {p.get('batched', 0)} of {p['count'] // max(1, figures.get('profile_rounds', 1))} cases a round, {p.get('batch_jobs_per_round', 0)} batch jobs a round (store lookups), "
                    f"{p.get('compiled', 0)} compiles; whole loop per case, batch jobs included, less IREE load+run: {p['loop_overhead_ms']:.2f} ms"
                )
        c = pr.get("cold")
        if c and c.get("count"):
            out.append(
                f"cold, {c['count']} cases in a started worker: duration {1000 * c['duration_s_mean']:.0f} ms, IREE import+compile+load+run {1000 * c['iree_s_mean']:.0f} ms; "
                f"overhead mean {c['mean_ms']:.2f} / median {c['median_ms']:.2f} / p90 {c['p90_ms']:.2f} ms"
            )
            out.append(
                "   split (mean ms/case): "
                + ", ".join(f"{k} {v:.2f}" for k, v in c["split_ms_mean"].items())
            )
        out.append(
            f"worker side alone, in-process (key, store read, load, run): {pr['worker_ms_per_job']:.2f} ms/job; top functions by own time:"
        )
        out += ["   " + line for line in pr["worker_top"][:12]]
        out.append(
            "parent side (the pytest worker) top functions by own time; lock waits = waiting for the worker:"
        )
        out += ["   " + line for line in pr["parent_top"][:12]]
    sh = figures.get("shards")
    if sh:
        out.append("")
        out.append("== Shard balance of --shard I/N on the durations the cold run recorded")
        for n, v in sh.items():
            out.append(
                f"N={n}: longest shard {v['max_s']:.1f} s, shortest {v['min_s']:.1f} s, spread {100 * v['spread']:.1f}%"
            )
    mem = figures.get("memory")
    if mem:
        out.append("")
        out.append(
            f"== Worker RSS over {figures.get('memory_jobs', '?')} jobs (sample cycled, every {figures.get('memory_cold_every', '?')}th job a cold compile), two workers side by side"
        )
        for label, v in mem.items():
            if "error" in v:
                out.append(f"{label}: {v['error']}")
                continue
            out.append(
                f"{label}: {v['worker_processes']} worker process(es); RSS at job 100 {v['rss_mb_at_100']:.0f} MB, at job {v['jobs']} {v['rss_mb_at_end']:.0f} MB "
                f"(growth {v['rss_growth_mb']:+.0f} MB); peak VmHWM {v['peak_hwm_mb']:.0f} MB; {v['statuses']}; {v['wall_s']:.0f} s"
            )
            out.append(f"   RSS (MB) every 100 jobs: {v['rss_mb_every_100']}")
    out += format_batching(figures)
    out.append("")
    out.append("== Targets")
    out += figures.get("verdicts", [])
    return "\n".join(out)


def format_batching(figures: dict[str, Any]) -> list[str]:
    """The report's sections on batching: verdicts against --batch-size 1, the bisection
    cost, CPU and peak RSS per batch size, MLIR threading."""
    out: list[str] = []
    same = figures.get("batched_vs_unbatched")
    if same is not None:
        out.append("")
        out.append(
            "== Batched (cold) against --batch-size 1 (cold-unbatched), case by case on status, stage, verdict"
        )
        out.append(
            f"{same['compared']} cases compared; {len(same['differ'])} differ; only batched {len(same['only_in_a'])}, only unbatched {len(same['only_in_b'])}"
        )
        for case_id, d in list(same["differ"].items())[:10]:
            out.append(
                f"   {case_id}: "
                + ", ".join(f"{f} {a} (batched) vs {b}" for f, (a, b) in d.items())
            )
    bs = figures.get("bisection")
    if bs:
        out.append("")
        if "error" in bs:
            out.append(f"== Bisection: {bs['error']}")
        else:
            out.append(
                f"== Bisection: a batch of {bs['size']} StableHLO cases through BatchCoordinator + WorkerClient (started worker, empty store); worker CPU from /proc"
            )
            for label in ("clean", "one failing", "one failing, culprits hidden"):
                v = bs.get(label)
                if not v:
                    continue
                cpu = f"{v['worker_cpu_s']:.2f}" if v.get("worker_cpu_s") is not None else "?"
                extra = (
                    f"; vs clean: wall {v['wall_vs_clean']:.2f}x, CPU {v.get('cpu_vs_clean', float('nan')):.2f}x"
                    if "wall_vs_clean" in v
                    else ""
                )
                out.append(
                    f"{label:<30} {v['cases']:>3} cases {v['batch_compiles']:>3} batch compile(s)  placed {v['placed']:>3}  wall {v['wall_s']:6.2f} s  worker CPU {cpu} s{extra}"
                )
    rs = figures.get("batch_rss")
    if rs:
        out.append("")
        if "error" in rs:
            out.append(f"== Batch size: {rs['error']}")
        else:
            out.append(
                f"== Batch size: the same {rs['cases']} cases (one group) compiled in batches of each size; fresh worker, empty store per size"
            )
            out.append(
                f"{'size':>5}{'batches':>9}{'wall s':>9}{'CPU s':>8}{'CPU s/case':>12}{'peak RSS MB':>13}  statuses"
            )
            for size, v in rs["sizes"].items():
                cpu = (
                    f"{v['cpu_s']:8.1f}{v['cpu_s_per_case']:12.3f}"
                    if v.get("cpu_s") is not None
                    else f"{'?':>8}{'?':>12}"
                )
                out.append(
                    f"{size:>5}{v['batches']:>9}{v['wall_s']:>9.1f}{cpu}{v['peak_rss_mb'] or 0:>13.0f}  {v['statuses']}"
                )
            ch = rs.get("choice") or {}
            if ch:
                out.append(
                    f"choice: batch size {ch['size']} (the smallest within {100 * ch['cpu_slack']:.0f}% of the best CPU s/case, size {ch['fastest']}, with peak RSS <= {ch['rss_limit_mb']:.0f} MB)"
                )
    th = figures.get("threads")
    if th:
        out.append("")
        out.append(
            "== MLIR threading in the workers, cold runs (pytest -n 2 on the machine's cores)"
        )
        out.append(
            "Session.set_flags: "
            + ", ".join(
                f"{k} {'accepted' if v is True else 'rejected (' + str(v) + ')'}"
                for k, v in th.get("session_flags", {}).items()
            )
        )
        out.append(
            f"global command-line flags given to the workers: {th.get('global_flags')} (worker processes that took them: {th.get('workers_with_flags', '?')})"
        )
        r = figures.get("ratios", {})
        if "nothreads_vs_cold_cpu" in r:
            out.append(
                f"threading off / default: {1 / r['nothreads_vs_cold_cpu']:.3f}x the CPU seconds, {1 / r['nothreads_vs_cold']:.3f}x the wall clock"
            )
    return out


def judge(figures: dict[str, Any]) -> list[str]:
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


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------
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


def pick(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    onnx_ids, shlo_ids = read_case_list(args.cases_file)
    if args.onnx > len(onnx_ids):  # more than the verified list: extend in hashed order
        known = set(onnx_ids)
        onnx_ids += [
            c
            for c in hashed_order(
                [cid for cid, c in onnx_index(onnx_data_root()).items() if not c.unsupported_reason]
            )
            if c not in known
        ]
    if args.stablehlo > len(shlo_ids):
        known = set(shlo_ids)
        shlo_ids += [c for c in hashed_order(list(stablehlo_index())) if c not in known]
    return onnx_ids[: args.onnx], shlo_ids[: args.stablehlo]


def stage_means(outcomes: list[dict[str, Any]], stages: tuple[str, ...]) -> dict[str, float]:
    if not outcomes:
        return {}
    return {
        s: round(statistics.fmean(o.get("stage_times", {}).get(s, 0.0) for o in outcomes), 4)
        for s in stages
    }


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


def _sibling(name: str) -> Any:
    """A module beside this file (benchmarks/ is no package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _empty(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    return path


def run_benchmark(args: argparse.Namespace, work_dir: Path) -> int:
    figures: dict[str, Any] = {
        "machine": machine_description(),
        "workers": args.workers,
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    onnx_ids, shlo_ids = pick(args)
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
        shutil.rmtree(store, ignore_errors=True)
        durations_file.unlink(missing_ok=True)
        phases: dict[str, Phase] = {}
        try:
            for name, tools in baselines:
                phases[name] = run_baseline(plans, args.workers, tools, name)
            if "cold" not in args.skip:
                phases["cold"] = run_ours(
                    "cold",
                    case_ids,
                    store,
                    work_dir,
                    args.workers,
                    durations_file,
                    extra_args=("--batch-size", str(args.batch_size)),
                )
            if "cold-unbatched" not in args.skip:
                phases["cold-unbatched"] = run_ours(
                    "cold-unbatched",
                    case_ids,
                    _empty(work_dir / "store-unbatched"),
                    work_dir,
                    args.workers,
                    extra_args=("--batch-size", "1"),
                )
            if "warm" not in args.skip:  # on the store that the batched cold run filled
                phases["warm"] = run_ours(
                    "warm",
                    case_ids,
                    store,
                    work_dir,
                    args.workers,
                    extra_args=("--batch-size", str(args.batch_size)),
                )
            if "threads" not in args.skip:
                env = threads_env(work_dir, args.thread_flags.split())
                phases["cold-nothreads"] = run_ours(
                    "cold-nothreads",
                    case_ids,
                    _empty(work_dir / "store-nothreads"),
                    work_dir,
                    args.workers,
                    extra_args=("--batch-size", str(args.batch_size)),
                    env=env,
                )
        except RuntimeError as e:
            print(f"ERROR: {e}", file=sys.stderr)
            return 2
        summary: dict[str, Any] = {}
        for key, phase in phases.items():
            summary[key] = phase.summary()
            stages = (
                ("import", "compile", "run", "compare", "harness")
                if key.startswith("baseline")
                else ("inputs", "store", "import", "compile", "load", "run", "reference", "compare")
            )
            summary[key]["stage_mean_s"] = stage_means(phase.outcomes, stages)
        statuses = {
            key: {o["case_id"]: o["status"] for o in p.outcomes} for key, p in phases.items()
        }
        if "cold" in phases and "cold-unbatched" in phases:
            summary["batched_vs_unbatched"] = figures["batched_vs_unbatched"] = compare_verdicts(
                phases["cold"].outcomes, phases["cold-unbatched"].outcomes
            )
        mismatches = (
            sorted({c for c in case_ids if len({s.get(c) for s in statuses.values()}) > 1})
            if len(statuses) > 1
            else []
        )
        if mismatches:
            summary["mismatches"] = {
                c: {k: s.get(c) for k, s in statuses.items()} for c in mismatches[:20]
            }
        summary["ratios"] = round_ratios(summary)
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
            p = last[key]
            overhead[key] = overhead_stats(p.outcomes)
            total = sum(o.get("duration") or 0.0 for o in p.outcomes)
            outside = max(p.wall - total / args.workers, 0.0)
            overhead[f"pytest_{key}"] = {
                "wall_per_case_ms": round(1000 * p.wall / p.cases, 1),
                "fixed_s": round(outside, 2),
                "fixed_per_case_ms": round(1000 * outside / p.cases, 1),
            }
    figures["overhead"] = overhead
    if "cold" in last:
        figures["cold_batched_cases"] = sum(
            1 for o in last["cold"].outcomes if o.get("info", {}).get("batch")
        )
    if "threads" not in args.skip:
        marks = work_dir / "threads-marks"
        figures["threads"] = {
            "global_flags": args.thread_flags.split(),
            "session_flags": {f: session_flag_accepted(f) for f in ("--mlir-disable-threading",)},
            "workers_with_flags": len(list(marks.iterdir())) if marks.is_dir() else 0,
        }
    if durations_file.exists():
        figures["shards"] = shard_balance(json.loads(durations_file.read_text()))

    if "bisect" not in args.skip or "batch-rss" not in args.skip:
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

    if "profile" not in args.skip or ("memory" not in args.skip and args.memory_jobs > 0):
        cases = load_cases(case_ids)
        if not (store.exists() and any(store.iterdir())):
            log("filling the store for the in-process measurements")
            from iree_conformance.engine.batching import BatchCoordinator, plan_batches
            from iree_conformance.engine.worker.parent import WorkerClient

            plan = plan_batches([(case, _target()) for case in cases], args.batch_size)
            client = WorkerClient(store)
            try:
                coordinator = BatchCoordinator()
                for case in cases:
                    run_batched(case, _target(), client, plan, coordinator)
            finally:
                client.close()
        if "profile" not in args.skip:
            log(f"profile: warm pipeline, {args.profile_rounds} round(s) over {len(cases)} cases")
            figures["profile"] = profile_warm(cases, store, args.profile_rounds, args.batch_size)
            figures["profile_rounds"] = args.profile_rounds
            if args.profile_cold > 0:
                log(f"profile: {args.profile_cold} cold cases in a started worker")
                figures["profile"]["cold"] = profile_cold(
                    cases, work_dir / "profile-cold-store", args.profile_cold
                )
        if "memory" not in args.skip and args.memory_jobs > 0:
            log(
                f"memory: {args.memory_jobs} jobs per worker, recycling at 400 and off, side by side"
            )
            figures["memory_jobs"] = args.memory_jobs
            figures["memory_cold_every"] = args.memory_cold_every
            figures["memory"] = measure_memory(
                cases,
                store,
                args.memory_jobs,
                args.memory_cold_every,
                {"max_jobs=400 (default)": 400, "recycling off": None},
            )

    if "whole-job" not in args.skip:
        whole_job = _sibling("whole_job")
        log("whole job: pytest conformance -n auto --offline cold, warm, then two re-selections")
        figures["whole_job"] = whole_job.measure(
            [], _empty(work_dir / "whole-job"), dict(os.environ)
        )
        print("\n".join(whole_job.format_figures(figures["whole_job"])), flush=True)

    figures["verdicts"] = judge(figures)
    figures["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    figures["loadavg_end"] = _loadavg()
    print(format_report(figures), flush=True)
    if args.json:
        args.json.write_text(
            json.dumps(figures, indent=1, default=str), encoding="utf-8", newline="\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
