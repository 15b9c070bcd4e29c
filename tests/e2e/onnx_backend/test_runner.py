"""onnx's BackendTest over IreeBackend: the manifests applied, and its verdicts against
the onnx_ops suite's, case by case (a live sample; docs/onnx-backend.md has the 320-case run)."""

from __future__ import annotations

import json
import re
import unittest
from pathlib import Path

import pytest

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.expectations.lookup import Expectations, ManifestEntry
from iree_conformance.model.compare import Tolerance
from iree_conformance.onnx_backend import runner

SAMPLE = 24  # the suite's fixed sample of 24: a subset of the documented 320


def _names_of(classes: dict[str, type]) -> set[str]:
    return {a for cls in classes.values() for a in vars(cls) if a.startswith("test_")}


def test_name_patterns_are_anchored():
    pattern = re.compile(runner.name_pattern(["test_abs", "test_a.b"]))
    assert pattern.search("test_abs_cpu") and pattern.search("test_abs_cuda")
    assert not pattern.search("test_abs_grad_cpu") and not pattern.search("test_aXb_cpu")


def test_the_manifests_become_xfails_exclusions_and_tolerances():
    def entry(*kinds):
        return ManifestEntry(kinds, "why", Path("m.toml"), 1)

    expectations = Expectations(
        "llvm-cpu",
        xfail={
            "onnx-ops/test_abs": entry("fail-compile"),
            "onnx-ops/test_acos": entry("pass", "fail-numerics"),
            "stablehlo/x": entry("fail-compile"),
        },
        tolerance={"onnx-ops/test_add": Tolerance(rtol=0.5)},
    )
    names = ["test_abs", "test_acos", "test_add", "test_asin"]
    built = runner.build_backend_test(__name__, expectations=expectations, names=names)
    classes = runner.selected_test_cases(built, names)
    assert _names_of(classes) == {f"{n}_{d}" for n in names for d in ("cpu", "cuda")}
    node = classes["OnnxBackendNodeModelTest"]
    assert getattr(node.test_abs_cpu, "__unittest_expecting_failure__", False)
    assert getattr(node.test_acos_cpu, "__unittest_skip__", False)  # flaky: excluded
    assert not getattr(node.test_asin_cpu, "__unittest_expecting_failure__", False)
    assert not getattr(node.test_asin_cpu, "__unittest_skip__", False)
    assert built._test_kwargs == {"test_add": {"rtol": 0.5}}  # passed to prepare and the compare


def test_the_real_models_are_excluded_they_download():
    built = runner.build_backend_test(__name__)
    real = built.test_cases["OnnxBackendRealModelTest"]
    assert getattr(real.test_resnet50_cpu, "__unittest_skip__", False)


def test_compare_verdicts_sorts_agreement_explanations_and_gaps():
    suite = {"a": "pass", "b": "fail", "c": "skip", "d": "pass"}
    found = runner.compare_verdicts(
        suite, {"a": "pass", "b": "pass", "c": "fail"}, {"b": "tolerance"}
    )
    assert found.agreed == ["a"] and list(found.explained) == ["b"]
    assert found.unexplained == {"c": "suite skip, runner fail"} and found.missing == ["d"]
    assert "UNEXPLAINED c" in found.render()


def test_suite_verdicts_read_a_results_file(tmp_path):
    path = tmp_path / "r.json"
    outcomes = [
        {"case_id": "onnx-ops/test_a", "suite": "onnx_ops", "status": "crash"},
        {"case_id": "onnx-ops/test_b", "suite": "onnx_ops", "status": "skip"},
        {"case_id": "stablehlo/x", "suite": "stablehlo", "status": "pass"},
    ]
    path.write_text(json.dumps({"outcomes": outcomes}), encoding="utf-8")
    assert runner.suite_verdicts(path) == {"test_a": "fail", "test_b": "skip"}
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not a --report-json results file"):
        runner.suite_verdicts(path)


class _Recorder(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.verdicts: dict[str, str] = {}

    def _set(self, test, verdict):
        self.verdicts[test.id().rsplit(".", 1)[-1]] = verdict

    def addSuccess(self, test):
        self._set(test, "pass")

    def addFailure(self, test, err):
        self._set(test, "fail")

    def addError(self, test, err):
        self._set(test, "fail")

    def addSkip(self, test, reason):
        self._set(test, "skip")


def test_backend_test_agrees_with_the_onnx_ops_suite_on_a_sample():
    from iree_conformance.common.store import default_store_dir
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.onnx_backend.backend import resolve_target
    from iree_conformance.suites.onnx_ops import collect

    names = runner.suite_sample(SAMPLE)
    assert len(names) == SAMPLE
    target = resolve_target("CPU")
    worker = WorkerClient(default_store_dir())
    suite = {}
    try:
        for case in collect(None):
            name = case.case_id.removeprefix(runner.SUITE_PREFIX)
            if name in names:
                status = run_case(Attempt(case, target), worker)[0].status
                suite[name] = status if status in ("pass", "skip") else "fail"
    finally:
        worker.close()
    classes = runner.selected_test_cases(runner.build_backend_test(__name__, names=names), names)
    tests = unittest.TestSuite(
        unittest.defaultTestLoader.loadTestsFromTestCase(cls) for cls in classes.values()
    )
    result = _Recorder()
    tests.run(result)
    ran = {n.removesuffix("_cpu"): v for n, v in result.verdicts.items() if n.endswith("_cpu")}
    agreement = runner.compare_verdicts(suite, ran)
    assert agreement.compared == SAMPLE and not agreement.missing, agreement.render()
    assert not agreement.unexplained, agreement.render()
    # Both verdicts occur: a sample of all passes (or all failures) would prove little.
    assert {"pass", "fail"} <= set(suite.values())


def test_the_runner_compiles_nothing_the_suite_compiled(tmp_path, monkeypatch):
    """Same flags, same bytes, same store keys: after the suite's run of a few operator
    tests (into a private store), onnx's runner over the backend adds no module and no
    failure to that store."""
    from iree_conformance.common.store import STORE_ENV
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.onnx_backend.backend import resolve_target
    from iree_conformance.suites.onnx_ops import collect

    store = tmp_path / "store"
    monkeypatch.setenv(STORE_ENV, str(store))
    names = runner.suite_sample(SAMPLE)[:4]
    worker = WorkerClient(store)
    try:
        for case in collect(None):
            if case.case_id.removeprefix(runner.SUITE_PREFIX) in names:
                run_case(Attempt(case, resolve_target("CPU")), worker)
    finally:
        worker.close()

    def entries():
        return sorted(
            p.relative_to(store)
            for kind in ("vmfb", "failure")
            for p in (store / kind).rglob("*.bin")
        )

    before = entries()
    assert before, "the suite stored nothing: the check would prove nothing"
    classes = runner.selected_test_cases(runner.build_backend_test(__name__, names=names), names)
    result = _Recorder()
    unittest.TestSuite(
        unittest.defaultTestLoader.loadTestsFromTestCase(cls) for cls in classes.values()
    ).run(result)
    assert {n for n in result.verdicts if n.endswith("_cpu")} == {f"{n}_cpu" for n in names}
    assert entries() == before


def test_the_command_rejects_bad_input_in_one_line(tmp_path, capsys):
    from iree_conformance.common.errors import EXIT_CONFIGURATION, run_cli
    from iree_conformance.onnx_backend.__main__ import PROG, main

    missing = tmp_path / "none.json"
    for argv, says in (
        (["--compare-with", str(missing)], "not a --report-json results file"),
        (["--expectations", str(tmp_path / "nowhere")], "no such folder"),
        (["--sample", "0"], "above 0"),
    ):
        assert run_cli(lambda argv=argv: main(argv), PROG) == EXIT_CONFIGURATION
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"{PROG}: error:") and says in err and "\n" not in err


def test_a_bad_sample_in_the_environment_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="IREE_ONNX_BACKEND_SAMPLE"):
        runner.backend_tests_from_environment(__name__, {runner.SAMPLE_ENV: "many"})
