"""The preparation comparison (engine/preparations.py) on a fake worker: a failure at
import or compile gets its case's other preparation compiled beside it, said in its info
and one diagnostic line; its status and stage never change."""

from __future__ import annotations

import dataclasses

import pytest

from iree_conformance.engine import preparations
from iree_conformance.engine.attempt import Attempt
from iree_conformance.model.cases import Case
from iree_conformance.model.jobs import CaseJob, CaseResult, Program
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.preparation import OtherPreparation
from iree_conformance.model.targets import Target
from iree_conformance.repro import make

TARGET = Target("llvm-cpu", ("--iree-hal-target-device=local",), "local-task")
OTHER = Program("torch/x", "mlir", source_bytes=b"func.func @main() { return }")


@dataclasses.dataclass
class TwoWays(Case):
    other: OtherPreparation | None = None
    asked: list[str] = dataclasses.field(default_factory=list)

    def other_preparation(self, stage: str) -> OtherPreparation | None:
        self.asked.append(stage)
        return self.other


class FakeWorker:
    def __init__(self, result: CaseResult):
        self.result, self.jobs = result, []

    def execute(self, job: CaseJob) -> CaseResult:
        self.jobs.append(job)
        return self.result


def _failed(stage: str = "compile") -> Outcome:
    return Outcome(
        "torch/x", "torch", "llvm-cpu", stage=stage, status="error", diagnostics=["error: no"]
    )


def test_a_compile_failure_whose_other_preparation_compiles_says_so_and_keeps_its_verdict():
    case = TwoWays("torch/x", "torch", "mlir", other=OtherPreparation("A's", "B's", OTHER))
    worker = FakeWorker(CaseResult(status="pass", stage="compile"))
    outcome = _failed()
    preparations.compare(Attempt(case, TARGET), outcome, worker)
    assert (outcome.status, outcome.stage) == ("error", "compile")
    assert outcome.diagnostics == [
        "error: no",
        "fails at compile with A's; passes import+compile with B's",
    ]
    said = outcome.info["preparations"]
    assert (said["other"], said["other_status"]) == ("B's", "pass")
    (job,) = worker.jobs
    assert job.compile_only and job.alone and job.program is OTHER
    assert job.compile_flags == TARGET.case_flags(case)  # the case's own flags


def test_an_other_preparation_that_fails_says_where_and_its_first_line():
    case = TwoWays("torch/x", "torch", "mlir", other=OtherPreparation("A's", "B's", OTHER))
    worker = FakeWorker(
        CaseResult(status="error", stage="compile", diagnostics=["", "error: op kept", "more"])
    )
    outcome = _failed("import")
    preparations.compare(Attempt(case, TARGET), outcome, worker)
    assert outcome.diagnostics[-1] == (
        "fails at import with A's; fails with B's too, at compile: error: op kept"
    )
    assert case.asked == ["import"]


def test_an_other_preparation_that_cannot_be_made_is_not_compiled():
    other = OtherPreparation("A's", "B's", None, "RuntimeError: cannot view\nmore")
    case = TwoWays("torch/x", "torch", "mlir", other=other)
    worker = FakeWorker(CaseResult(status="pass"))
    outcome = _failed()
    preparations.compare(Attempt(case, TARGET), outcome, worker)
    assert not worker.jobs
    assert outcome.diagnostics[-1] == (
        "fails at compile with A's; fails with B's too, at import: RuntimeError: cannot view"
    )


@pytest.mark.parametrize(
    ("status", "stage"),
    [("pass", "run"), ("fail", "compare"), ("error", "run"), ("crash", "compile")],
)
def test_nothing_is_tried_beside_a_pass_or_a_failure_after_the_compile(status, stage):
    case = TwoWays("torch/x", "torch", "mlir", other=OtherPreparation("A's", "B's", OTHER))
    worker = FakeWorker(CaseResult(status="pass"))
    outcome = Outcome("torch/x", "torch", "llvm-cpu", stage=stage, status=status)
    preparations.compare(Attempt(case, TARGET), outcome, worker)
    assert not worker.jobs and not case.asked and "preparations" not in outcome.info


def test_a_case_without_an_other_preparation_is_left_as_it_is():
    case = TwoWays("onnx-ops/x", "onnx-ops", "onnx")
    worker = FakeWorker(CaseResult(status="pass"))
    outcome = _failed()
    preparations.compare(Attempt(case, TARGET), outcome, worker)
    assert not worker.jobs and outcome.diagnostics == ["error: no"]
    assert "preparations" not in outcome.info


def test_a_torch_import_failure_gets_no_reproducer_folder_and_says_why():
    outcome = _failed("import")
    why = make.not_reproducible_reason(outcome)
    assert why is not None and "iree-turbine" in why and "command-line tools" in why
    compiled = _failed("compile")
    assert make.not_reproducible_reason(compiled) is None  # input.mlir shows it
    onnx = Outcome("onnx-ops/x", "onnx-ops", "llvm-cpu", stage="import", status="error")
    assert make.not_reproducible_reason(onnx) is None  # iree-import-onnx shows it


class ModelsSkipped:
    """A suite whose models file cannot be listed here (transformers missing)."""

    name, description, case_prefix, floor, options = "torch", "t", "torch/", 0, ()

    def collect(self, context):
        return [
            Case("torch/models", "torch", "mlir", skip_reason="needs transformers: pip install"),
            Case("torch/nn/prelu", "torch", "mlir"),
        ]


def test_repro_of_a_case_whose_file_is_skipped_here_says_why(tmp_path):
    from iree_conformance.repro.lookup import UnknownCase, find_case
    from iree_conformance.suites.registry import SuiteRegistry
    from iree_conformance.suites.run_options import RunOptions

    registry = SuiteRegistry([ModelsSkipped()])
    with pytest.raises(UnknownCase, match=r"torch/models is skipped \(needs transformers"):
        find_case("torch/models/gpt2", tmp_path, RunOptions(), {}, registry)
    with pytest.raises(UnknownCase, match="the nearest: torch/nn/prelu"):
        find_case("torch/nn/prelux", tmp_path, RunOptions(), {}, registry)
