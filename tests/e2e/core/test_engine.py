"""The engine's API on its own (no pytest run): the one verdict path, compile-only,
retries in a fresh worker, skips and --bisect-numerics, on real compiles."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from iree_conformance.common.vocabulary import Verdict
from iree_conformance.engine import pipeline
from iree_conformance.engine.attempt import AttemptSettings
from iree_conformance.engine.verdicts import Engine, EngineSettings, judge
from iree_conformance.expectations.lookup import Expectations, ManifestEntry
from iree_conformance.model.cases import Case
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.targets import load_targets
from tests.support.core_helpers import ADD_MLIR, TARGETS_TOML


@dataclasses.dataclass
class AddCase(Case):
    """a + b on fixed inputs; ``off`` shifts the expected sum (a numerics failure)."""

    off: float = 0.0

    def input_sets(self) -> list[list[np.ndarray]]:
        return [[np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)]]

    def expected_sets(self, input_sets):
        return [[a + b + self.off] for a, b in input_sets]


@dataclasses.dataclass
class BisectableAdd(AddCase):
    """Bisectable like an ONNX model case; records that it was asked."""

    fails: bool = False

    def bisect(self, run_candidate) -> str:
        if self.fails:
            raise ValueError("no graph here")
        return "first diverging node: add"


def add(case_id: str = "t/add", cls=AddCase, **kw) -> Case:
    return cls(
        case_id=case_id,
        suite="t",
        kind="mlir",
        source_bytes=ADD_MLIR.encode(),
        input_type="stablehlo",
        entry_function="main",
        **kw,
    )


def listed(case_id: str, *kinds: str) -> Expectations:
    exp = Expectations("llvm-cpu")
    exp.xfail[case_id] = ManifestEntry(tuple(kinds), "a known failure", __file__, 1)  # type: ignore[arg-type]
    return exp


@pytest.fixture(scope="module")
def targets():
    return load_targets(TARGETS_TOML)


@pytest.fixture
def engine_for(tmp_path):
    made: list[Engine] = []

    def make(compile_only: bool = False, **settings) -> Engine:
        shared = AttemptSettings(compile_only=compile_only)
        made.append(Engine(tmp_path / "store", EngineSettings(shared, **settings)))
        return made[-1]

    yield make
    for engine in made:
        engine.close()


@pytest.fixture
def faults(monkeypatch):
    """Case ids whose job crashes at run: "once" on the first try only, "always" on every try."""
    chosen: dict[str, str] = {}
    real = pipeline.build_job

    def build_job(attempt, input_sets):
        job = real(attempt, input_sets)
        how = chosen.get(attempt.case.case_id)
        if how == "always" or (how == "once" and not attempt.retry):
            job = dataclasses.replace(job, fault=("run", "crash"))
        return job

    monkeypatch.setattr(pipeline, "build_job", build_job)
    return chosen


def test_compile_only_pass_of_a_listed_run_failure_is_a_pass_not_an_xpass():
    passed = Outcome("t/a", "t", "llvm-cpu", stage="compile", status="pass")
    run_listed = listed("t/a", "fail-run")
    assert judge(run_listed, passed, compile_only=True).name == Verdict.PASS
    assert judge(run_listed, passed, compile_only=True).expected == "fail-run"
    assert judge(run_listed, passed).name == Verdict.XPASS
    # A listed compile failure that now compiles is an XPASS compile-only too.
    assert judge(listed("t/a", "fail-compile"), passed, compile_only=True).name == Verdict.XPASS
    failed = Outcome("t/a", "t", "llvm-cpu", stage="compile", status="error")
    assert judge(listed("t/a", "fail-compile"), failed, compile_only=True).name == Verdict.XFAIL


def test_a_pass_is_judged_and_recorded(engine_for, targets):
    checked = engine_for().check(add(), targets["llvm-cpu"], Expectations("llvm-cpu"))
    assert checked.judgement.name == Verdict.PASS
    assert checked.outcome.verdict == "pass" and checked.outcome.status == "pass"
    assert checked.outcome.expected is None and checked.result.status == "pass"


def test_a_numerics_failure_is_red_and_a_listed_one_is_xfail(engine_for, targets):
    engine = engine_for()
    wrong = add(off=1.0)
    red = engine.check(wrong, targets["llvm-cpu"], Expectations("llvm-cpu"))
    assert (
        red.judgement.name == Verdict.FAIL and "unexpected fail-numerics" in red.judgement.message
    )
    known = engine.check(wrong, targets["llvm-cpu"], listed("t/add", "fail-numerics"))
    assert known.outcome.verdict == "xfail"
    assert known.outcome.reason == "fail-numerics: a known failure"


def test_a_crash_that_goes_away_on_retry_is_flaky(engine_for, targets, faults):
    faults["t/add"] = "once"
    checked = engine_for(retries=1).check(add(), targets["llvm-cpu"], Expectations("llvm-cpu"))
    assert checked.outcome.verdict == "flaky" and checked.outcome.status == "pass"
    assert [a["kind"] for a in checked.outcome.attempts] == ["crash"]
    assert checked.judgement.message.startswith("flaky: crash then pass")


def test_a_crash_that_repeats_on_retry_is_confirmed(engine_for, targets, faults):
    faults["t/add"] = "always"
    checked = engine_for(retries=2).check(add(), targets["llvm-cpu"], Expectations("llvm-cpu"))
    assert checked.outcome.verdict == "fail" and checked.outcome.status == "crash"
    assert [a["kind"] for a in checked.outcome.attempts] == ["crash", "crash"]


def test_no_retries_reports_the_first_try(engine_for, targets, faults):
    faults["t/add"] = "once"
    checked = engine_for().check(add(), targets["llvm-cpu"], Expectations("llvm-cpu"))
    assert checked.outcome.verdict == "fail" and checked.outcome.attempts == []


def test_compile_only_keeps_the_module_and_never_retries(engine_for, targets):
    engine = engine_for(compile_only=True, retries=3)
    checked = engine.check(add(), targets["llvm-cpu"], listed("t/add", "fail-numerics"))
    assert checked.outcome.verdict == "pass" and checked.outcome.expected == "fail-numerics"
    assert checked.result.vmfb and checked.outcome.attempts == []


def test_a_target_that_cannot_run_here_is_a_skip_with_its_reason(engine_for, targets):
    checked = engine_for().check(add(), targets["metal"], Expectations("metal"))
    assert checked.outcome.verdict == "skip" and "runs on macos" in checked.judgement.message
    assert checked.outcome.reason == checked.judgement.message


def test_bisect_numerics_adds_its_finding_or_why_it_could_not_run(engine_for, targets):
    engine = engine_for(bisect_numerics=True)
    found = engine.check(
        add(cls=BisectableAdd, off=1.0), targets["llvm-cpu"], Expectations("llvm-cpu")
    )
    assert found.outcome.diagnostics[-1] == "bisect-numerics: first diverging node: add"
    broken = engine.check(
        add(cls=BisectableAdd, off=1.0, fails=True), targets["llvm-cpu"], Expectations("llvm-cpu")
    )
    assert broken.outcome.diagnostics[-1] == (
        "bisect-numerics could not run: ValueError: no graph here"
    )
    passing = engine.check(add(cls=BisectableAdd), targets["llvm-cpu"], Expectations("llvm-cpu"))
    assert not any("bisect" in d for d in passing.outcome.diagnostics)


def test_bisect_numerics_of_a_stablehlo_case_compares_every_op_on_iree(
    engine_for, targets, tmp_path
):
    """A bundled StableHLO case whose shipped expected values are off: IREE's values of
    every op agree with the interpreter's, and the finding says so."""
    pytest.importorskip("jaxlib", reason="the interpreter is the reference of every op")
    from iree_conformance.suites.stablehlo import BundledCase

    (tmp_path / "add.mlir").write_text(ADD_MLIR, encoding="utf-8")
    a = np.arange(4, dtype=np.float32)
    np.savez(tmp_path / "add.npz", input_0=a, input_1=a, expected_0=a + a + 1)
    case = BundledCase(
        case_id="stablehlo/add_off",
        suite="stablehlo",
        kind="mlir",
        source_path=tmp_path / "add.mlir",
        input_type="stablehlo",
        entry_function="main",
        data_path=tmp_path / "add.npz",
    )
    checked = engine_for(bisect_numerics=True).check(
        case, targets["llvm-cpu"], Expectations("llvm-cpu")
    )
    assert checked.outcome.status == "fail"
    assert checked.outcome.diagnostics[-1] == (
        "bisect-numerics: no op diverges at the case's tolerance (each dtype's default): "
        "1 op result of @main compared against the StableHLO interpreter"
    )


TORCH_CASES = """
import torch
from iree_conformance.frontends.torch_export import module_case

mlp = module_case(
    "mlp",
    lambda: torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)),
    lambda: (torch.randn(3, 4),),
    dynamic_shapes=lambda: ({0: torch.export.Dim("batch", max=16)},),
)
"""


def test_bisect_numerics_of_a_torch_case_compares_every_fx_node_on_iree(
    engine_for, targets, tmp_path
):
    """A real torch case (dynamic batch; the probe is compiled at the example's shapes):
    IREE's value of every FX node agrees with torch eager's, and the finding says so."""
    pytest.importorskip("iree.turbine", reason="the torch suite's extra")
    from iree_conformance.common.store import ArtifactStore
    from iree_conformance.suites import torch as torch_suite

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "mlp.py").write_text(TORCH_CASES, encoding="utf-8")
    (listed,) = torch_suite.user_listed(tmp_path / "mine", ArtifactStore(tmp_path / "store"))
    case = torch_suite.to_case(listed, tmp_path / "store")
    found = engine_for().bisect(case, targets["llvm-cpu"])
    assert found == (
        "bisect-numerics: no FX node diverges at the case's tolerance (rtol 0.0001, atol "
        "1e-05): 3 FX node values of the decomposed program compared against torch eager"
    )
