"""The reduction of a failing ONNX model case, through the worker and the artifact store.

``reduce_case`` runs the whole case once, as the suite does, and by the failure it finds:

* **import, compile, crash**: ``frontends.onnx.reduce.reduce_onnx`` with the predicate
  "fails the same way": each candidate goes to the worker as a job of its own (compiled
  alone, through the store, so a candidate seen before, in this run or an earlier one,
  costs a store read), and it fails the same way when its ``FailureSignature`` (status,
  stage, normalized first error line) is the whole model's. Import and compile failures
  are checked compile-only; a crash at load or run runs each candidate on its inputs.
* **numerics**: the numerics bisection names the first diverging node; that node alone,
  fed the values onnxruntime computed for its inputs, runs on IREE and is compared with
  onnxruntime's outputs for it by the final comparison's rule. Either IREE shows the
  mismatch on the node alone, or the folder says that it needs the surrounding graph.

``write_reduced`` writes ``reduced/model.onnx``, its inputs (``input_K.npy``, in the
model's input order; for numerics also onnxruntime's ``expected_K.npy``) and
``reduced/reduction.json``, atomically (common/fsutil.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from iree_conformance.common.fsutil import atomic_write_bytes, atomic_write_text
from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.engine import pipeline
from iree_conformance.engine.attempt import Attempt, AttemptSettings
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.model.cases import Case
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.reduction import (
    Candidate,
    FailureSignature,
    NumericsIsolation,
    ReductionError,
    ReductionResult,
)
from iree_conformance.model.targets import Target

__all__ = [
    "NumericsIsolation",
    "Reducible",
    "ReductionReport",
    "reduce_case",
    "same_mlir_failure",
    "signature_of",
    "write_reduced",
]

#: Failures the graph reduction cuts down (the rest: numerics isolation, or nothing).
REDUCIBLE_STAGES = (Stage.IMPORT, Stage.COMPILE)


Progress = Callable[[int, int], None]  # (candidates checked, nodes in the smallest so far)


@runtime_checkable
class Reducible(Protocol):
    """A case the reduction can cut (an ONNX model case, suites/model_case.py): the
    engine gives the predicate and the runner, the case's frontend cuts."""

    def reduce_failure(
        self,
        fails: Callable[[Candidate], bool],
        budget_s: float | None,
        progress: Progress | None,
        first_line: str,
    ) -> ReductionResult: ...

    def isolate_numerics(self, run_candidate: Any) -> NumericsIsolation | None: ...


def signature_of(status: str, stage: str, diagnostics: list[str]) -> FailureSignature | None:
    """A failure's signature; None for a pass or a skip."""
    if status in (Status.PASS, Status.SKIP):
        return None
    return FailureSignature.of(f"{str(status)}@{str(stage)}", diagnostics)


@dataclasses.dataclass
class ReductionReport:
    """What ``reduce_case`` found: the whole model's outcome, and what it cut."""

    outcome: Outcome
    signature: FailureSignature | None
    result: ReductionResult | None = None
    numerics: NumericsIsolation | None = None
    note: str = ""

    @property
    def reduced(self) -> Candidate | None:
        if self.result is not None:
            return self.result.candidate
        return self.numerics.candidate if self.numerics is not None else None


def _job(case_id: str, suite: str, flags: tuple[str, ...], candidate: Candidate, target: Target,
         compile_only: bool):  # fmt: skip
    probe = Case(
        case_id=f"{case_id}#reduce",
        suite=suite,
        kind="onnx",
        source_bytes=candidate.model.SerializeToString(),
    )
    attempt = Attempt(probe, target, AttemptSettings(compile_only=compile_only, alone=True))
    job = pipeline.build_job(attempt, [] if compile_only else [list(candidate.inputs)])
    return dataclasses.replace(job, compile_flags=tuple(flags))


def same_failure(
    case: Case, target: Target, worker: WorkerClient, signature: FailureSignature
) -> Callable[[Candidate], bool]:
    """The predicate: the candidate, compiled alone with the case's flags, fails the way
    the whole model did (compile-only for import and compile failures)."""
    compile_only = signature.stage.split("@")[-1] in REDUCIBLE_STAGES
    flags = target.case_flags(case)

    def fails(candidate: Candidate) -> bool:
        result = worker.execute(
            _job(case.case_id, case.suite, flags, candidate, target, compile_only)
        )
        status = Status.CRASH if result.status == Status.CRASH else result.status
        return signature.same(signature_of(status, result.stage, list(result.diagnostics)))

    return fails


def same_mlir_failure(
    case_id: str,
    suite: str,
    flags: tuple[str, ...],
    target: Target,
    worker: WorkerClient,
    signature: FailureSignature,
    seen: dict[str, list[str]] | None = None,
) -> Callable[[str], bool]:
    """The MLIR op reduction's predicate (frontends/mlir_reduce.py): the candidate text,
    compiled alone (compile-only, through the store) with ``flags``, the flags the whole
    program compiled with, fails with the whole program's signature. ``seen``: each
    failing candidate's own diagnostics, by its text."""

    def fails(text: str) -> bool:
        probe = Case(case_id=f"{case_id}#reduce", suite=suite, kind="mlir",
                     source_bytes=text.encode("utf-8"))  # fmt: skip
        attempt = Attempt(probe, target, AttemptSettings(compile_only=True, alone=True))
        job = dataclasses.replace(pipeline.build_job(attempt, []), compile_flags=tuple(flags))
        result = worker.execute(job)
        same = signature.same(signature_of(result.status, result.stage, list(result.diagnostics)))
        if same and seen is not None:
            seen[text] = list(result.diagnostics)
        return same

    return fails


def reduce_case(
    case: Case,
    target: Target,
    worker: WorkerClient,
    budget_s: float | None,
    progress: Progress | None = None,
    outcome: Outcome | None = None,
) -> ReductionReport:
    """Runs the case (unless its ``outcome`` is given) and reduces its failure."""
    if outcome is None:
        outcome, _ = pipeline.run_case(Attempt(case, target), worker)
    signature = signature_of(outcome.status, outcome.stage, outcome.diagnostics)
    report = ReductionReport(outcome, signature)
    if signature is None:
        report.note = f"the model {outcome.status}es on {target.name}: nothing to reduce"
        return report
    if not isinstance(case, Reducible):
        report.note = f"{case.case_id} is no ONNX model case: only ONNX models are reduced"
        return report
    reducible = outcome.status == Status.CRASH or (
        outcome.status == Status.ERROR and outcome.stage in REDUCIBLE_STAGES
    )
    if outcome.status == Status.FAIL:
        report.numerics = isolate_numerics(case, target, worker)
        return report
    if not reducible:
        report.note = (
            f"a failure at {outcome.stage} ({outcome.status}) is not reduced: the graph "
            "reduction takes import, compile and crash failures, the node isolation numerics"
        )
        return report
    try:
        report.result = case.reduce_failure(
            same_failure(case, target, worker, signature),
            budget_s,
            progress,
            signature.first_line,
        )
    except ReductionError as e:
        report.note = f"not reduced: {e}"
    return report


def isolate_numerics(case: Case, target: Target, worker: WorkerClient) -> NumericsIsolation | None:
    """The first diverging node (the numerics bisection) as a model of its own, run on
    IREE through the worker."""
    assert isinstance(case, Reducible)
    flags = target.case_flags(case)

    def run(candidate_model: Any, values: Any) -> dict[str, np.ndarray]:
        names = [i.name for i in candidate_model.graph.input]
        cut = Candidate((), candidate_model, tuple(names), tuple(values))
        result = worker.execute(_job(case.case_id, case.suite, flags, cut, target, False))
        if result.status != Status.PASS or not result.outputs:
            raise RuntimeError(f"IREE did not run it: {' '.join(result.diagnostics[:2])}")
        return dict(zip([o.name for o in candidate_model.graph.output], result.outputs[0]))

    return case.isolate_numerics(run)


def write_reduced(report: ReductionReport, out_dir: Path, target: Target) -> list[Path]:
    """Writes ``out_dir/reduced/``: the reduced model, its inputs, ``reduction.json``."""
    candidate = report.reduced
    folder = out_dir / "reduced"
    written: list[Path] = []
    record: dict[str, Any] = {
        "case": report.outcome.case_id,
        "target": target.name,
        "status": str(report.outcome.status),
        "stage": str(report.outcome.stage),
        "note": report.note,
    }
    if report.signature is not None:
        record["signature"] = {
            "stage": report.signature.stage,
            "first_line": report.signature.first_line,
            "normalized": report.signature.line,
        }
    if report.result is not None:
        r = report.result
        record.update(
            kind="graph",
            nodes_before=r.nodes_before,
            nodes_after=r.nodes_after,
            nodes_in_file=len(r.op_types),
            op_types=r.op_types,
            complete=r.complete,
            candidates_checked=r.tested,
            elapsed_s=round(r.elapsed_s, 3),
            budget_s=r.budget_s,
            summary=r.summary(),
        )
    if report.numerics is not None:
        n = report.numerics
        record.update(
            kind="numerics-node",
            node=n.node,
            op_type=n.op_type,
            shows_alone=n.shows_alone,
            summary=n.summary(),
        )
    if candidate is not None:
        written.append(
            atomic_write_bytes(folder / "model.onnx", candidate.model.SerializeToString())
        )
        files = []
        for k, (name, value) in enumerate(zip(candidate.input_names, candidate.inputs)):
            written.append(atomic_write_bytes(folder / f"input_{k}.npy", _npy(value)))
            files.append({"name": name, "file": f"input_{k}.npy", "shape": list(value.shape),
                          "dtype": str(value.dtype)})  # fmt: skip
        record["inputs"] = files
        if report.numerics is not None:
            for k, value in enumerate(report.numerics.expected):
                written.append(atomic_write_bytes(folder / f"expected_{k}.npy", _npy(value)))
    written.append(
        atomic_write_text(
            folder / "reduction.json", json.dumps(record, indent=1, default=str) + "\n"
        )
    )
    return written


def _npy(value: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return buffer.getvalue()
