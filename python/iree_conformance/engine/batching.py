"""Batched compilation: many small cases compiled as one module.

Most of a small module's compile is a fixed cost per compiler invocation, so cases of
one suite, target and flag set are grouped into batches of up to ``--batch-size``
functions (``module_merge.py`` renames and merges them in the worker). Planning is
deterministic: cases are sorted by id within a group, and a batch ends at the size limit
or at a case whose id hash says so (content-defined boundaries: adding or removing one
case moves only its neighbours' batch, not every batch after it).

The ``BatchCoordinator`` runs in the pytest process: the first case of a batch to run
compiles the batch; a batch that fails to compile, crashes or times out is split in
halves, and halves again, until the failing cases stand alone and run as they would
without batching. Every case that is not a pass in its batch is run again alone, and
that solo run is its result: a verdict never depends on batching.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable

from iree_conformance.common.vocabulary import Status
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.model.cases import Case
from iree_conformance.model.jobs import BatchJob
from iree_conformance.model.targets import Target

DEFAULT_BATCH_SIZE = 16


@dataclasses.dataclass(frozen=True)
class Batch:
    """Cases compiled together for one target; ``batch_id`` names it (and its xdist group)."""

    batch_id: str
    target: str
    cases: tuple[Case, ...] = dataclasses.field(compare=False, repr=False)

    @property
    def case_ids(self) -> tuple[str, ...]:
        return tuple(case.case_id for case in self.cases)


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where one case's compiled function lives, and its share of the batch's work."""

    batch_key: str
    batch_size: int
    cache_hits: dict[str, bool]
    stage_times: dict[str, float]
    member_id: str | None = None  # its id in that batch, when an earlier batch compiled it


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def group_key(case: Case, target: Target) -> tuple[str, ...]:
    """Cases that may share a module: one suite, target, source kind and flag set."""
    return (case.suite, target.name, case.kind, *target.case_flags(case))


def plan_batches(
    pairs: list[tuple[Case, Target]], size: int, alone: Callable[[Case, Target], bool] | None = None
) -> dict[tuple[str, str], Batch]:
    """(target name, case id) -> its Batch, for every batchable case in a batch of two or
    more. Cases that are not batchable, skipped on their target, left alone by ``alone``
    or alone in their group stay out.

    ``alone`` is for cases known to fail (listed in the target's manifest): a failure in
    a batch costs a failed compile of the whole batch, and a case that is not a pass in
    its batch runs alone anyway, so a known failure is cheapest alone from the start."""
    if size < 2:
        return {}
    groups: dict[tuple[str, ...], list[Case]] = {}
    targets: dict[tuple[str, ...], Target] = {}
    for case, target in pairs:
        if (
            not case.batchable
            or case.skip_reason_for(target)
            or (alone is not None and alone(case, target))
        ):
            continue
        key = group_key(case, target)
        groups.setdefault(key, []).append(case)
        targets[key] = target
    plan: dict[tuple[str, str], Batch] = {}
    for key, cases in sorted(groups.items()):
        chunks: list[list[Case]] = []
        for case in sorted(cases, key=lambda c: c.case_id):
            if not chunks or len(chunks[-1]) >= size or _digest(case.case_id) % size == 0:
                chunks.append([])
            chunks[-1].append(case)
        flags_digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:8]
        for chunk in chunks:
            if len(chunk) < 2:
                continue
            batch = Batch(
                f"batch-{flags_digest}-{hashlib.sha256(chunk[0].case_id.encode()).hexdigest()[:8]}",
                targets[key].name,
                tuple(chunk),
            )
            for case in chunk:
                plan[(batch.target, case.case_id)] = batch
    return plan


def batch_job(cases: list[Case] | tuple[Case, ...], target: Target) -> BatchJob:
    """The worker job that imports, merges and compiles these cases (``Executor.compile_batch``)."""
    return BatchJob(
        members=tuple(case.program() for case in cases),
        compile_flags=target.case_flags(cases[0]),
        host_specific=target.host_specific,
        stage_timeouts=dict(target.stage_timeouts),
    )


@dataclasses.dataclass
class BatchCoordinator:
    """Per pytest process: compiles each batch once (bisecting failures) and tells a case
    where its function is. ``compiles`` counts batch compile jobs (bisection included)."""

    placements: dict[str, dict[str, Placement]] = dataclasses.field(default_factory=dict)
    compiles: int = 0

    def placement(
        self, batch: Batch, case: Case, target: Target, worker: WorkerClient
    ) -> Placement | None:
        """Where the case runs in its batch; None: it runs alone."""
        if batch.batch_id not in self.placements:
            self.placements[batch.batch_id] = self._compile(list(batch.cases), target, worker)
        return self.placements[batch.batch_id].get(case.case_id)

    def _compile(
        self, cases: list[Case], target: Target, worker: WorkerClient
    ) -> dict[str, Placement]:
        if len(cases) < 2:
            return {}
        self.compiles += 1
        result = worker.execute(batch_job(cases, target))
        # Members an earlier batch compiled (the store's member index) run there.
        placements = {
            case_id: Placement(key, size, {"import": True, "compile": True}, {}, member_id)
            for case_id, (key, member_id, size) in result.elsewhere.items()
        }
        if result.status == Status.PASS:
            if not result.placed or result.batch_key is None:
                return placements
            share = {
                stage: seconds / len(result.placed) for stage, seconds in result.stage_times.items()
            }
            return {
                **placements,
                **{
                    case_id: Placement(
                        result.batch_key, len(result.placed), dict(result.cache_hits), share
                    )
                    for case_id in result.placed
                },
            }
        remaining = [
            case
            for case in cases
            if case.case_id not in result.left_out and case.case_id not in result.elsewhere
        ]
        culprits = set(result.culprits)
        if culprits and len(culprits) < len(remaining):
            # The compiler's errors named their cases: those run alone, the rest again.
            return {
                **placements,
                **self._compile(
                    [case for case in remaining if case.case_id not in culprits], target, worker
                ),
            }
        # Otherwise (a crash, a timeout, an error that names no case) split what is left
        # in halves until the failing cases stand alone; they then run solo, exactly as
        # without batching.
        if len(remaining) < 2:
            return placements
        middle = len(remaining) // 2
        return {
            **placements,
            **self._compile(remaining[:middle], target, worker),
            **self._compile(remaining[middle:], target, worker),
        }
