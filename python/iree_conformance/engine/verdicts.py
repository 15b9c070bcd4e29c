"""The engine: one case on one target, run and judged, with no pytest in sight.

It holds the one verdict path (``judge``, compile-only included), the retry of an
unexpected result in a fresh worker, and ``--bisect-numerics``. The pytest plugin calls
``Engine.check`` for each item and turns the returned verdict into pass, xfail, skip or
fail; ``iree-conformance run-bundle`` judges its outcomes with ``judge``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from iree_conformance.common.machine_faults import MACHINE
from iree_conformance.common.vocabulary import (
    RED_VERDICTS,
    STAGE_ORDER,
    ExpectationKind,
    Stage,
    Status,
    Verdict,
)
from iree_conformance.engine import benchmark, pipeline
from iree_conformance.engine.attempt import Attempt, AttemptSettings
from iree_conformance.engine.batching import Batch, BatchCoordinator
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.expectations.lookup import Expectations
from iree_conformance.model.cases import Case
from iree_conformance.model.jobs import CaseResult
from iree_conformance.model.outcome import NOT_JUDGED, Outcome
from iree_conformance.model.targets import Target, unavailable_reason, uncompilable_reason


@dataclasses.dataclass
class Judgement:
    """A judged Outcome: its Verdict, the message pytest shows, and the listed kind.
    (Once named ``Verdict``; that name is now the enum of verdicts.)"""

    name: Verdict
    message: str
    expected: str | None
    # The manifest line of the case's entry, {"path", "line"}: where an XPASS's line is
    # deleted (the annotations point there).
    manifest: dict[str, Any] | None = None

    def record(self, outcome: Outcome) -> Outcome:
        """Writes the verdict into the Outcome: its name, the listed kind, and (skip, xfail,
        flaky) the message as the reason. The one way a judged Outcome is completed."""
        outcome.verdict, outcome.expected = self.name, self.expected
        if self.manifest is not None:
            outcome.info["manifest"] = dict(self.manifest)
        if self.name in (Verdict.SKIP, Verdict.XFAIL, Verdict.FLAKY):
            outcome.reason = self.message
        return outcome


_COMPILE_STAGE_KINDS = (
    ExpectationKind.FAIL_PREPARE,
    ExpectationKind.FAIL_IMPORT,
    ExpectationKind.FAIL_COMPILE,
)


def judge(expectations: Expectations, outcome: Outcome, compile_only: bool = False) -> Judgement:
    """The verdict of an Outcome under the target's manifest: the one verdict path.

    Compile-only, a listed run-stage failure says nothing about a compile that passes:
    that is a pass (the kind stays recorded), not an XPASS. A judgement of a listed case
    carries its manifest line (``info.manifest``: where the annotations point).
    """
    judgement = _judge(expectations, outcome, compile_only)
    entry = expectations.xfail.get(outcome.case_id)
    if entry is not None and judgement.name != Verdict.SKIP:
        judgement.manifest = {"path": str(entry.path), "line": entry.line}
        if entry.issue:
            judgement.manifest["issue"] = entry.issue
    return judgement


def _judge(expectations: Expectations, outcome: Outcome, compile_only: bool) -> Judgement:
    entry = expectations.xfail.get(outcome.case_id)
    expected = entry.expect if entry else None
    kind = outcome.failure_kind
    if outcome.status == Status.SKIP:
        return Judgement(Verdict.SKIP, outcome.reason or "skipped", expected)
    if outcome.info.get("harness_error") == MACHINE:  # never IREE's, listed or not
        return Judgement(Verdict.FAIL, outcome.summary(), expected)
    if outcome.not_judged and expected != ExpectationKind.FAIL_REFERENCE:
        # The harness's, not IREE's: no verdict either way (model/outcome.not_judged).
        return Judgement(Verdict.SKIP, f"{NOT_JUDGED}: {_first_line(outcome)}", expected)
    if (
        compile_only
        and outcome.status == Status.PASS
        and entry is not None
        and entry.expect not in _COMPILE_STAGE_KINDS
    ):
        return Judgement(Verdict.PASS, "", entry.expect)
    if entry is not None and entry.flaky:
        if outcome.observed in entry.kinds:
            return Judgement(
                Verdict.FLAKY,
                f"flaky ({entry.expect}), {outcome.observed} this time: {entry.reason}",
                expected,
            )
        return Judgement(
            Verdict.FAIL,
            f"expected one of {entry.expect} ({entry.where}) but got {outcome.observed}: {outcome.summary()}",
            expected,
        )
    if kind is None:
        if entry is None:
            return Judgement(Verdict.PASS, "", None)
        return Judgement(
            Verdict.XPASS,
            f"XPASS(strict): {outcome.case_id} now passes on {outcome.target} but is listed as "
            f"{entry.expect}; delete its line at {entry.where}",
            expected,
        )
    if entry is None:
        return Judgement(Verdict.FAIL, f"unexpected {kind}: {outcome.summary()}", None)
    if entry.expect == kind:
        return Judgement(Verdict.XFAIL, f"{kind}: {entry.reason}", expected)
    return Judgement(
        Verdict.FAIL,
        f"expected {entry.expect} ({entry.where}) but got {kind}{_direction(kind, outcome.stage, entry.expect)}: {outcome.summary()}",
        expected,
    )


def _first_line(outcome: Outcome) -> str:
    lines = (ln.strip() for d in outcome.diagnostics for ln in d.splitlines())
    line = next((ln for ln in lines if ln), "")
    return line or f"{outcome.status} at {outcome.stage}"


_STAGE_OF_KIND: dict[str, str] = {
    ExpectationKind.FAIL_PREPARE: Stage.PREPARE,
    ExpectationKind.FAIL_IMPORT: Stage.IMPORT,
    ExpectationKind.FAIL_COMPILE: Stage.COMPILE,
    ExpectationKind.FAIL_RUN: Stage.RUN,
    ExpectationKind.FAIL_REFERENCE: Stage.REFERENCE,
    ExpectationKind.FAIL_NUMERICS: Stage.COMPARE,
}


def _direction(kind: str, stage: str, expected_kind: str) -> str:
    """', at an earlier stage' or ', at a later stage' when the stages can be ordered."""
    expected_stage = _STAGE_OF_KIND.get(expected_kind)
    actual_stage = _STAGE_OF_KIND.get(kind, stage)
    if expected_stage is None or actual_stage not in STAGE_ORDER or actual_stage == expected_stage:
        return ""
    earlier = STAGE_ORDER.index(actual_stage) < STAGE_ORDER.index(expected_stage)
    return f", at an {'earlier' if earlier else 'later'} stage ({actual_stage})"


@runtime_checkable
class Bisectable(Protocol):
    """A Case that --bisect-numerics can bisect (an ONNX model case, a bundled StableHLO case)."""

    def bisect(self, run_candidate: Any) -> str: ...


@dataclasses.dataclass(frozen=True)
class EngineSettings:
    """The run options the engine reads (the plugin fills them from ``RunOptions``)."""

    # What every attempt shares: compile-only, timing runs, batching off.
    attempt: AttemptSettings = AttemptSettings()
    retries: int = 0  # tries again of an unexpected result, each in a fresh worker
    bisect_numerics: bool = False
    benchmark: bool | None = None  # --benchmark / --no-benchmark; None: models only
    fresh_worker: bool = False  # a fresh worker for every case


@dataclasses.dataclass
class Checked:
    """A case run and judged: its Outcome (the verdict recorded in it), the Judgement
    (whose message pytest shows) and the worker's result (it holds the vmfb compile-only)."""

    outcome: Outcome
    judgement: Judgement
    result: CaseResult


class Engine:
    """Runs cases in one worker process, started on first use, and judges them."""

    def __init__(
        self,
        store_root: Path | None,
        settings: EngineSettings,
        stage_timeouts: Mapping[str, float] | None = None,
    ):
        self.store_root = store_root
        self.settings = settings
        self.stage_timeouts = dict(stage_timeouts or {})
        self.coordinator = BatchCoordinator()
        self._worker: WorkerClient | None = None

    @property
    def worker(self) -> WorkerClient:
        if self._worker is None:
            self._worker = WorkerClient(self.store_root, self.stage_timeouts)
        return self._worker

    def close(self) -> None:
        """Stops the worker; the next case starts a fresh one."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def check(
        self, case: Case, target: Target, expectations: Expectations, batch: Batch | None = None
    ) -> Checked:
        """Runs the case (in its batch's module when given), bisects a numerics failure on
        request, judges it, and retries an unexpected result in a fresh worker."""
        settings = self.settings
        compile_only = settings.attempt.compile_only
        reason = (None if compile_only else unavailable_reason(target)) or uncompilable_reason(
            target
        )
        if reason:
            outcome = Outcome(
                case.case_id, case.suite, target.name, status=Status.SKIP, reason=reason
            )
            result = CaseResult(status=Status.SKIP)
        else:
            if settings.fresh_worker:
                self.close()
            placement = (
                self.coordinator.placement(batch, case, target, self.worker)
                if batch is not None
                else None
            )
            timing_runs = (
                0
                if compile_only
                else benchmark.timing_runs_for(
                    case, settings.attempt.timing_runs, settings.benchmark
                )
            )
            budget = benchmark.timing_budget_for(
                settings.attempt.timing_runs, settings.benchmark, settings.attempt.timing_budget
            )
            attempt = Attempt(
                case,
                target,
                dataclasses.replace(
                    settings.attempt, timing_runs=timing_runs, timing_budget=budget
                ),
                tolerance=expectations.tolerance_for(case.case_id),
                placement=placement,
            )
            outcome, result = pipeline.run_case(attempt, self.worker)
            benchmark.note_untimed(outcome, timing_runs)
        if (
            outcome.status == Status.FAIL
            and settings.bisect_numerics
            and isinstance(case, Bisectable)
        ):
            outcome.diagnostics.append(self.bisect(case, target))
        judgement = judge(expectations, outcome, compile_only)
        if judgement.name in RED_VERDICTS and settings.retries and not compile_only:
            outcome, judgement = self.retry(case, target, expectations, outcome, judgement)
        judgement.record(outcome)
        return Checked(outcome, judgement, result)

    def retry(
        self,
        case: Case,
        target: Target,
        expectations: Expectations,
        outcome: Outcome,
        judgement: Judgement,
    ) -> tuple[Outcome, Judgement]:
        """Tries an unexpected result again in a fresh worker, compiling afresh.

        The same unexpected result again confirms it. Any other result makes the case
        flaky: the verdict names every try, and flaky never counts as a pass; but a first
        try the machine failed (``common/machine_faults``) says nothing about the program,
        so a retry that the machine let run gives the verdict.
        """
        tries = [outcome]
        for _ in range(self.settings.retries):
            self.close()  # a fresh worker: no state (or heap) left over from other cases
            # The run's timing and batching settings are not the retry's: it runs alone,
            # untimed, compiled afresh.
            retry = Attempt(
                case, target, tolerance=expectations.tolerance_for(case.case_id), retry=True
            )
            again, _ = pipeline.run_case(retry, self.worker)
            tries.append(again)
            if again.observed != outcome.observed:
                break
        last = tries[-1]
        last.attempts = [t.as_attempt() for t in tries[:-1]]
        machines = [t.info.get("harness_error") == MACHINE for t in tries]
        if all(t.observed == outcome.observed for t in tries) or (machines[0] and not machines[-1]):
            return last, judge(expectations, last)
        seen = " then ".join(t.observed for t in tries)
        return last, Judgement(
            Verdict.FLAKY,
            f"flaky: {seen} (retried in a fresh worker); first try: {outcome.summary()}",
            judgement.expected,
        )

    def bisect(self, case: Bisectable, target: Target) -> str:
        """Runs the program with every intermediate exposed; names the first diverging one."""
        return bisect_numerics(case, target, self.worker)


def bisect_numerics(case: Bisectable, target: Target, worker: WorkerClient) -> str:
    """The "bisect-numerics: ..." diagnostic of a numerics failure: the case widens its
    program (an ONNX model: every node output; StableHLO text: every op result of
    ``@main``) and this runs the widened program on IREE, as the case was run."""
    assert isinstance(case, Case)

    def run_candidate(program: Any, inputs: Any) -> Any:
        onnx_model = not isinstance(program, str)
        probe = Case(
            case_id=f"{case.case_id}#bisect",
            suite=case.suite,
            kind="onnx" if onnx_model else case.kind,
            source_bytes=program.SerializeToString() if onnx_model else program.encode(),
            entry_function=None if onnx_model else case.entry_function,
            input_type="auto" if onnx_model else case.input_type,
        )
        result = worker.execute(pipeline.build_job(Attempt(probe, target), [list(inputs)]))
        if result.status != Status.PASS or not result.outputs:
            raise RuntimeError(f"the widened program did not run: {result.diagnostics}")
        if not onnx_model:
            return list(result.outputs[0])
        return dict(zip([o.name for o in program.graph.output], result.outputs[0]))

    try:
        return "bisect-numerics: " + case.bisect(run_candidate)
    except Exception as e:  # noqa: BLE001 - triage must not hide the failure itself
        return f"bisect-numerics could not run: {type(e).__name__}: {e}"
