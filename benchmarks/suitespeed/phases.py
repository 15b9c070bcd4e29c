"""The timed phases: the baseline and the suite's pytest runs (cold, cold-unbatched,
warm, cold-nothreads) on the same cases, each timed by wall clock and by the CPU seconds
of all the processes it ran; one round of them, and its summary."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import itertools
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .baseline import BaselinePlan, run_baseline_case
from .machine import children_cpu, loadavg
from .outcome_stats import compare_verdicts, stage_means
from .ratios import round_ratios
from .sample import ROOT
from .threads import threads_env

PYTEST_PATHS = ("conformance/test_conformance.py", "-m", "onnx_ops or stablehlo")
BASELINE_STAGES = ("import", "compile", "run", "compare", "harness")
OURS_STAGES = ("inputs", "store", "import", "compile", "load", "run", "reference", "compare")


def log(message: str) -> None:
    print(f"... {message}", file=sys.stderr, flush=True)


def empty_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    return path


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


def pytest_overhead(phase: Phase, workers: int) -> dict[str, float]:
    """A pytest run's wall clock that no case accounts for (pytest start, collection,
    xdist, teardown, batch jobs): wall minus the case durations spread over `workers`."""
    total = sum(o.get("duration") or 0.0 for o in phase.outcomes)
    outside = max(phase.wall - total / workers, 0.0)
    return {
        "wall_per_case_ms": round(1000 * phase.wall / phase.cases, 1),
        "fixed_s": round(outside, 2),
        "fixed_per_case_ms": round(1000 * outside / phase.cases, 1),
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
    return Phase(name, len(plans), wall, children_cpu() - cpu0, outcomes, loadavg())


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
    return Phase(name, len(case_ids), wall, cpu, outcomes, loadavg(), {"pytest_rc": rc})


def run_round(
    case_ids: list[str],
    plans: list[BaselinePlan],
    baselines: list[tuple[str, dict[str, str]]],
    work_dir: Path,
    *,
    workers: int,
    batch_size: int,
    skip: list[str],
    thread_flags: list[str],
) -> dict[str, Phase]:
    """One round of the timed phases, in order, the batched cold run on an empty
    ``work_dir/store`` (which the warm run then reuses) recording its durations.
    Raises RuntimeError when a pytest run left no results JSON."""
    store = empty_dir(work_dir / "store")
    durations_file = work_dir / "durations.json"
    durations_file.unlink(missing_ok=True)
    batched = ("--batch-size", str(batch_size))
    phases: dict[str, Phase] = {}
    for name, tools in baselines:
        phases[name] = run_baseline(plans, workers, tools, name)
    if "cold" not in skip:
        phases["cold"] = run_ours(
            "cold", case_ids, store, work_dir, workers, durations_file, extra_args=batched
        )
    if "cold-unbatched" not in skip:
        phases["cold-unbatched"] = run_ours(
            "cold-unbatched",
            case_ids,
            empty_dir(work_dir / "store-unbatched"),
            work_dir,
            workers,
            extra_args=("--batch-size", "1"),
        )
    if "warm" not in skip:  # on the store that the batched cold run filled
        phases["warm"] = run_ours("warm", case_ids, store, work_dir, workers, extra_args=batched)
    if "threads" not in skip:
        env = threads_env(work_dir, thread_flags)
        phases["cold-nothreads"] = run_ours(
            "cold-nothreads",
            case_ids,
            empty_dir(work_dir / "store-nothreads"),
            work_dir,
            workers,
            extra_args=batched,
            env=env,
        )
    return phases


def summarize_round(phases: dict[str, Phase], case_ids: list[str]) -> dict[str, Any]:
    """Each phase's figures and stage means, batched against unbatched case by case,
    the cases whose status differs between phases, and the round's ratios."""
    summary: dict[str, Any] = {}
    for key, phase in phases.items():
        summary[key] = phase.summary()
        stages = BASELINE_STAGES if key.startswith("baseline") else OURS_STAGES
        summary[key]["stage_mean_s"] = stage_means(phase.outcomes, stages)
    statuses = {key: {o["case_id"]: o["status"] for o in p.outcomes} for key, p in phases.items()}
    if "cold" in phases and "cold-unbatched" in phases:
        summary["batched_vs_unbatched"] = compare_verdicts(
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
    return summary
