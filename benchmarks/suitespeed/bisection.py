"""The cost of a batch with one case that fails to compile: the same batch clean, with
one failing member (the compiler's errors may name it), and with one while the culprits
are hidden, so that the coordinator must bisect."""

from __future__ import annotations

import dataclasses
import shutil
import time
from pathlib import Path
from typing import Any

from .machine import process_cpu, worker_pid
from .sample import _target, cold_variant, largest_group

# A module that parses and survives the check rewrite and the merge, and that IREE
# rejects when it compiles it: an unknown custom call has no lowering.
FAILING_MLIR = """module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @suite_speed_no_such_target(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


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
            pid = worker_pid(client)
            cpu0, t0 = process_cpu(pid), time.perf_counter()
            coordinator = BatchCoordinator()
            batch = Batch(f"bench-{label}", target.name, tuple(batch_cases))
            runner: Any = _NoCulprits(client) if hide else client  # duck-typed client
            placed = coordinator._compile(list(batch.cases), target, runner)
            wall = time.perf_counter() - t0
            cpu1 = process_cpu(worker_pid(client))
            same_worker = worker_pid(client) == pid
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
