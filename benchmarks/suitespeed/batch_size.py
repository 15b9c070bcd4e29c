"""The batch size: the same cases of one group compiled in batches of each size, the
worker's CPU seconds per case and peak RSS, and the size they argue for."""

from __future__ import annotations

import math
import shutil
import time
from pathlib import Path
from typing import Any

from iree_conformance.model.jobs import BatchJob, CaseJob

from .machine import process_cpu, read_proc_status, worker_pid
from .sample import _target, largest_group

BATCH_RSS_SIZES = (1, 4, 8, 16, 32)


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
            pid = worker_pid(client)
            base = read_proc_status(pid) if pid else {}
            cpu0, t0 = process_cpu(pid), time.perf_counter()
            for start in range(0, len(group), size):
                chunk = group[start : start + size]
                job: CaseJob | BatchJob
                if len(chunk) == 1:
                    job = build_job(
                        Attempt(chunk[0], target, AttemptSettings(compile_only=True)), []
                    )
                else:
                    job = batch_job(chunk, target)
                status = client.execute(job).status
                statuses[status] = statuses.get(status, 0) + 1
            wall = time.perf_counter() - t0
            now = worker_pid(client)
            cpu1 = process_cpu(now) if now == pid else None
            mem = read_proc_status(pid) if pid is not None and now == pid else {}
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
