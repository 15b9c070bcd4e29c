"""A model whose inputs are no verdict gets the same judgement from a bundle as from the suite.

``reshape/reshape.onnx``: x [40] reshaped by an int64 input ``shape`` [2]. The seed's random
shape (5, 8) fits, so onnxruntime gives a reference and IREE runs the model, but a random
shape is no verdict (model/unjudged.py): an error at ``reference``, from
``pytest conformance`` and from ``--compile-only --bundle`` then ``run-bundle`` alike. A
bundle whose module does not load gives the suite's "the run failed on inputs that are no
verdict" error, IREE's lines beside it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from iree_conformance.bundles.manifest_check import write_digest
from iree_conformance.engine.attempt import Attempt
from iree_conformance.engine.pipeline import run_case
from iree_conformance.model.cases import Case
from iree_conformance.model.jobs import CaseResult
from iree_conformance.model.targets import Target
from tests.support.onnx_testlib import run_conformance

ROOT = Path(__file__).resolve().parents[3]
CASE = "onnx-dir/reshape/reshape.onnx"


def reshape_model() -> onnx.ModelProto:
    v = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        "reshape",
        [v("x", TensorProto.FLOAT, [40]), v("shape", TensorProto.INT64, [2])],
        [v("y", TensorProto.FLOAT, [None, None])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _run(cmd: list[str], store: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "IREE_CONFORMANCE_STORE": str(store)}
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def _suite(folder: Path, tmp: Path, store: Path, *extra: str) -> dict:
    env = {"IREE_CONFORMANCE_STORE": str(store)}
    return run_conformance(tmp, env, "onnx_dir", "--onnx-dir", str(folder), *extra)[1]


def _run_bundle(bundle: Path, report: Path, store: Path) -> dict:
    proc = _run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "run-bundle",
            str(bundle),
            "--driver",
            "local-task",
            "--report-json",
            str(report),
        ],
        store,
    )
    assert report.exists(), proc.stdout + proc.stderr
    return {o["case_id"]: o for o in json.loads(report.read_text())["outcomes"]}


def _judgement(outcome: dict) -> tuple:
    return outcome["status"], outcome["stage"], outcome["verdict"], outcome["diagnostics"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("unjudged")
    folder, store, bundle = tmp / "models", tmp / "store", tmp / "bundle"
    (folder / "reshape").mkdir(parents=True)
    onnx.save(reshape_model(), str(folder / "reshape" / "reshape.onnx"))
    suite = _suite(folder, tmp / "suite", store)
    compiled = _suite(folder, tmp / "compile", store, "--compile-only", "--bundle", str(bundle))
    ran = _run_bundle(bundle, tmp / "bundle-results.json", store)
    return {"suite": suite, "compiled": compiled, "bundle": bundle, "ran": ran, "store": store}


def test_the_suite_says_the_random_shape_is_no_verdict(runs: dict):
    suite = runs["suite"][CASE]
    assert (suite["status"], suite["stage"]) == ("error", "reference"), suite
    assert suite["diagnostics"][0].startswith("IREE ran the model, but the run is no verdict")
    assert "[inputs.shape]" in suite["diagnostics"][0], suite
    assert "shape" in suite["info"]["inputs"]["unjudged"]


def test_the_case_is_bundled_with_its_reason_and_no_expected_values(runs: dict):
    assert (runs["compiled"][CASE]["status"], runs["compiled"][CASE]["stage"]) == (
        "pass",
        "compile",
    )
    manifest = json.loads((runs["bundle"] / "manifest.json").read_text())
    (record,) = [r for r in manifest["cases"] if r["case_id"] == CASE]
    assert "[inputs.shape]" in record["unjudged"] and "checks" not in record
    assert record["info"]["inputs"]["shapes"] == {"x": [40], "shape": [2]}
    with np.load(runs["bundle"] / record["data"]) as arrays:
        assert sorted(arrays.files) == ["input_0_0", "input_0_1"]
        assert arrays["input_0_1"].tolist() == [5, 8]  # the seed's shape, which fits


def test_run_bundle_gives_the_suites_judgement(runs: dict):
    assert _judgement(runs["ran"][CASE]) == _judgement(runs["suite"][CASE])


def test_a_run_that_fails_is_the_suites_no_verdict_error_with_iree_lines(
    runs: dict, tmp_path: Path
):
    bundle = tmp_path / "bundle"
    shutil.copytree(runs["bundle"], bundle)
    manifest_path = bundle / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    (record,) = [r for r in manifest["cases"] if r["case_id"] == CASE]
    garbage = b"not a vm flatbuffer" * 8  # IREE cannot load it: a load-stage error
    digest = hashlib.sha256(garbage).hexdigest()
    (bundle / "modules" / f"{digest}.vmfb").write_bytes(garbage)
    record["module"], record["module_sha256"] = f"modules/{digest}.vmfb", digest
    manifest_path.write_text(json.dumps(manifest))
    write_digest(bundle, manifest_path.read_bytes())  # an edit made knowingly
    ran = _run_bundle(bundle, tmp_path / "results.json", runs["store"])[CASE]
    assert (ran["status"], ran["stage"]) == ("error", "reference"), ran
    assert ran["verdict"] == runs["suite"][CASE]["verdict"]  # an unlisted error, either way
    iree_lines = ran["diagnostics"][1:]
    assert iree_lines, ran
    # The suite, given the same load failure from its worker, says the same.
    suite = _pipeline_on_load_failure(record["unjudged"], iree_lines)
    assert (suite.status, suite.stage, suite.diagnostics) == (
        ran["status"],
        ran["stage"],
        ran["diagnostics"],
    )
    assert ran["diagnostics"][0].startswith(
        "the run failed, but a run of this model is no verdict: "
    )


@dataclasses.dataclass
class _UnjudgedCase(Case):
    reason: str = ""

    def unjudged_reason(self) -> str | None:
        return self.reason


class _LoadFails:
    def __init__(self, lines: list[str]):
        self.lines = lines

    def execute(self, job) -> CaseResult:
        return CaseResult(status="error", stage="load", diagnostics=list(self.lines))


def _pipeline_on_load_failure(reason: str, lines: list[str]):
    case = _UnjudgedCase(CASE, "onnx_dir", "onnx", source_bytes=b"", reason=reason)
    target = Target("llvm-cpu", (), "local-task")
    outcome, _ = run_case(Attempt(case, target), _LoadFails(lines))  # type: ignore[arg-type]
    return outcome
