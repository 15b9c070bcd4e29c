"""One attempt at one case on one target: everything the pipeline needs, in one frozen record.

``Engine.check`` builds an ``Attempt`` per try (a retry is a new one); ``pipeline.run_case``
runs it and ``pipeline.build_job`` turns it into the worker's ``CaseJob``. What every
attempt of a run shares (compile-only, timing, batching off) is ``AttemptSettings``, held
once in ``EngineSettings``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from iree_conformance.common.timing import DEFAULT_TIMING_BUDGET
from iree_conformance.engine.batching import Placement
from iree_conformance.model.cases import Case
from iree_conformance.model.compare import Tolerance
from iree_conformance.model.jobs import CaseJob, Program
from iree_conformance.model.targets import Target


@dataclasses.dataclass(frozen=True)
class AttemptSettings:
    """The part of an attempt that is the same for every case of a run."""

    compile_only: bool = False
    timing_runs: int = 0  # timed runs of a pass (0: none)
    timing_budget: float | None = DEFAULT_TIMING_BUDGET  # --timing-budget (None: full)
    # Compiled alone: never run in the module of a batch the store remembers (--batch-size 1,
    # bundles, --fresh-worker).
    alone: bool = False


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One try of a case on a target."""

    case: Case
    target: Target
    settings: AttemptSettings = AttemptSettings()
    tolerance: Tolerance | None = None  # the manifest's, merged over each check's
    retry: bool = False  # a retry compiles afresh (the store is bypassed)
    placement: Placement | None = None  # run in this batch's module

    @property
    def compile_only(self) -> bool:
        return self.settings.compile_only

    @property
    def timing_runs(self) -> int:
        return self.settings.timing_runs

    @property
    def alone(self) -> bool:
        return self.settings.alone

    def job(self, program: Program, **fields: Any) -> CaseJob:
        """The worker's job for program as this attempt's case on its target: the case's
        flags on the target, the target's driver, device and time limits, the entry
        function; ``fields`` set the rest (inputs, compile-only, timing, batch)."""
        case, target = self.case, self.target
        return CaseJob(
            program=program,
            compile_flags=target.case_flags(case),
            target=target.name,
            driver=target.driver,
            device=target.device,
            host_specific=target.host_specific,
            entry_function=case.entry_function,
            stage_timeouts=dict(target.stage_timeouts),
            **fields,
        )

    def but(self, **changes: object) -> Attempt:
        """A copy with these fields changed (``settings`` fields by their own names)."""
        own = {k: v for k, v in changes.items() if k in _OWN_FIELDS}
        shared = {k: v for k, v in changes.items() if k not in _OWN_FIELDS}
        if shared:
            own["settings"] = dataclasses.replace(self.settings, **shared)  # type: ignore[arg-type]
        return dataclasses.replace(self, **own)  # type: ignore[arg-type]


_OWN_FIELDS = frozenset(f.name for f in dataclasses.fields(Attempt))
