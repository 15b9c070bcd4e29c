"""check-model on small models built with onnx.helper: the quantization-grid rule, the
opset conversion and guessed dims it names, and a huge diagnostic kept out of the
console and the JSON (the real models these stand for: docs/real-models.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.support.onnx_testlib import check_model

ROOT = Path(__file__).resolve().parents[3]


def quantized_sigmoid_opset13() -> onnx.ModelProto:
    """x [n, 64] -> Quantize (uint8) -> Dequantize -> Sigmoid; opset 13, n symbolic."""
    graph = helper.make_graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"]),
            helper.make_node("Sigmoid", ["dq"], ["y"]),
        ],
        "qsig",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 64])],
        initializer=[
            numpy_helper.from_array(np.array(0.02, np.float32), "s"),
            numpy_helper.from_array(np.array(128, np.uint8), "z"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def tree_ensemble(nodes: int = 2000) -> onnx.ModelProto:
    """An ai.onnx.ml TreeEnsembleRegressor whose attributes print as ~250 KB of MLIR."""
    node = helper.make_node(
        "TreeEnsembleRegressor",
        ["x"],
        ["y"],
        domain="ai.onnx.ml",
        n_targets=1,
        nodes_treeids=[0] * nodes,
        nodes_nodeids=list(range(nodes)),
        nodes_featureids=[0] * nodes,
        nodes_values=[0.5] * nodes,
        nodes_modes=["LEAF"] * nodes,
        nodes_truenodeids=[0] * nodes,
        nodes_falsenodeids=[0] * nodes,
        target_treeids=[0] * nodes,
        target_nodeids=list(range(nodes)),
        target_ids=[0] * nodes,
        target_weights=[1.0] * nodes,
    )
    graph = helper.make_graph(
        [node],
        "tree",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("store")


@pytest.mark.parametrize("variant", ["static", "dynamic"])
def test_quantized_output_is_judged_by_the_grid_and_the_conversion_is_named(
    tmp_path: Path, store: Path, variant: str
):
    path = tmp_path / "qsig.onnx"
    onnx.save(quantized_sigmoid_opset13(), path)
    report = tmp_path / "out.json"
    extra = ["--dynamic"] if variant == "dynamic" else []
    run = check_model(path, store, "--timing-runs", "0", "--json", str(report), *extra)
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    assert "opset: the model's opset 13 was converted to 17 before import" in out
    assert f"iree-import-onnx {path} --opset-version 17" in out
    assert "output 0: judged by the quantization-grid rule: <= 2 steps of 0.02" in out
    assert out.index("output 0: judged") < out.index("verdict: pass")
    outcome = json.loads(report.read_text())
    (rule,) = outcome["metrics"]["outputs"]
    assert rule["rule"] == "quantization-grid" and "through Sigmoid" in rule["grid"]
    assert outcome["info"]["opset_from"] == 13 and outcome["info"]["opset_to"] == 17
    if variant == "static":
        guessed = (
            "guessed dims (the shape rule chose them; the model does not say): n = 1 (batch rule)"
        )
        assert guessed in out and "--dim n=SIZE" in out and "qsig.inputs.toml" in out
        assert out.index(guessed) < out.index("verdict: pass")


def test_huge_diagnostic_is_cut_and_kept_in_a_file(tmp_path: Path, store: Path):
    path = tmp_path / "tree.onnx"
    onnx.save(tree_ensemble(), path)
    report = tmp_path / "out.json"
    run = check_model(path, store, "--timing-runs", "0", "--json", str(report))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "verdict: error at compile" in run.stdout
    longest = max(len(line) for line in (run.stdout + run.stderr).splitlines())
    assert longest <= 1024 + 100, longest
    outcome = json.loads(report.read_text())
    assert all(len(x) <= 1024 + 100 for d in outcome["diagnostics"] for x in d.splitlines())
    assert "onnx.TreeEnsembleRegressor" in outcome["diagnostics"][0]
    kept = Path(outcome["info"]["diagnostics_file"])
    assert kept.parent == store / "diagnostics" and f"full diagnostics: {kept}" in run.stdout
    full = kept.read_text()
    assert len(full) > 100_000 and "target_weights" in full
