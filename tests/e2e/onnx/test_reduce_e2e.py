"""``iree-conformance reduce`` with IREE: a real ONNX operator test that fails to compile
cut to its failing node, a graph built here around an op IREE cannot lower, a numerics
failure's node run alone, and the bad inputs (a passing model, a malformed file, an
output folder that exists, a budget that runs out)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

from iree_conformance.cli.main import main
from iree_conformance.engine.reduction import _job, signature_of
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.frontends.onnx import node_tests
from iree_conformance.frontends.onnx.reduce import Candidate
from iree_conformance.model.targets import load_targets
from iree_conformance.suites.onnx_ops import data_dir

ROOT = Path(__file__).resolve().parents[3]
TARGETS = ROOT / "conformance" / "targets.toml"
SIGMOID = Path(onnxruntime.__file__).parent / "datasets" / "sigmoid.onnx"
# 63 nodes (AffineGrid's function body); fails to compile on onnx.If (llvm-cpu.toml).
AFFINE = "test_affine_grid_2d_expanded"
POOL = "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True"


@pytest.fixture(scope="module")
def affine_grid(tmp_path_factory) -> Path:
    folder = node_tests.materialize(data_dir(None)) / AFFINE  # no case-folded twin
    copy = tmp_path_factory.mktemp("affine") / AFFINE
    shutil.copytree(folder, copy)
    return copy / "model.onnx"


def reduce(tmp_path: Path, model: Path, *extra: str) -> int:
    return main(
        ["reduce", str(model), "--targets", str(TARGETS), "--store-dir", str(tmp_path / "store"),
         "-o", str(tmp_path / "out"), *extra]
    )  # fmt: skip


def compile_signature(model: Path, names: list[str]):
    """The reduced file compiled on its own, as a reproducer would."""
    target = load_targets(TARGETS)["llvm-cpu"]
    loaded = onnx.load(str(model))
    cut = Candidate((), loaded, tuple(names), ())
    worker = WorkerClient(None)
    try:
        result = worker.execute(
            _job("check", "reduce", tuple(target.flags_for("onnx")), cut, target, True)
        )
    finally:
        worker.close()
    return signature_of(result.status, result.stage, list(result.diagnostics))


def test_a_real_operator_test_is_cut_to_its_failing_node(tmp_path, capsys, affine_grid):
    assert len(onnx.load(str(affine_grid)).graph.node) == 63
    assert reduce(tmp_path, affine_grid) == 1
    out = capsys.readouterr().out
    # Counted with their subgraphs' nodes: the failing If holds 23 in its branches (the If
    # itself fails to legalize, so inlining its branch changes the failure: it stays whole).
    assert "reduced 113 nodes to 24 (If" in out
    record = json.loads((tmp_path / "out" / "reduced" / "reduction.json").read_text())
    assert record["nodes_before"] == 113 and record["nodes_after"] == 24 and record["complete"]
    assert record["op_types"][0] == "If"
    # The reduced file alone fails with the same normalized first line.
    names = [i["name"] for i in record["inputs"]]
    again = compile_signature(tmp_path / "out" / "reduced" / "model.onnx", names)
    assert again is not None and again.line == record["signature"]["normalized"]
    for i, spec in enumerate(record["inputs"]):
        value = np.load(tmp_path / "out" / "reduced" / f"input_{i}.npy")
        assert list(value.shape) == spec["shape"]


def test_out_of_budget_keeps_the_smallest_found_and_says_so(tmp_path, capsys, affine_grid):
    assert reduce(tmp_path, affine_grid, "--reduce-budget", "0.001") == 1
    out = capsys.readouterr().out
    assert "ran out: this is the smallest failing graph found so far" in out
    record = json.loads((tmp_path / "out" / "reduced" / "reduction.json").read_text())
    assert record["complete"] is False and record["nodes_after"] <= 113
    assert (tmp_path / "out" / "reduced" / "model.onnx").is_file()


def test_a_graph_around_an_op_iree_cannot_lower(tmp_path, capsys):
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4])
    nodes = [
        helper.make_node("Relu", ["X"], ["a"]),
        helper.make_node("Sigmoid", ["a"], ["b"]),
        helper.make_node(
            "Scaler", ["b"], ["c"], domain="ai.onnx.ml", offset=[0.5] * 4, scale=[2.0] * 4
        ),
        helper.make_node("Abs", ["c"], ["d"]),
        helper.make_node("Neg", ["d"], ["Y"]),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "scaler", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
    )
    path = tmp_path / "scaler.onnx"
    onnx.save(model, str(path))
    assert reduce(tmp_path, path) == 1
    out = capsys.readouterr().out
    # IREE's importer leaves Scaler's result untyped (!torch.none): the first op that
    # fails to legalize is the Abs that reads it, so the smallest such graph is the two.
    assert "onnx.Abs" in out and "(!torch.none)" in out
    assert "reduced 5 nodes to 2 (Scaler, Abs" in out
    record = json.loads((tmp_path / "out" / "reduced" / "reduction.json").read_text())
    # Its input is Sigmoid's output on the real input: inside (0, 1).
    value = np.load(tmp_path / "out" / "reduced" / "input_0.npy")
    assert record["inputs"][0]["name"] == "b" and ((value > 0) & (value < 1)).all()


def test_a_numerics_failure_isolates_its_first_diverging_node(tmp_path, capsys):
    # The real operator test (fail-numerics in llvm-cpu.toml), wrapped: Abs -> it -> Neg.
    folder = node_tests.materialize(data_dir(None)) / POOL
    model = onnx.load(str(folder / "model.onnx"))
    pool = model.graph.node[0]
    first, last = pool.input[0], pool.output[0]
    pool.input[0], pool.output[0] = "absolute", "pooled"
    nodes = [helper.make_node("Abs", [first], ["absolute"]), pool,
             helper.make_node("Neg", ["pooled"], [last])]  # fmt: skip
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    path = tmp_path / "pool.onnx"
    onnx.save(model, str(path))
    code = reduce(tmp_path, path)
    out = capsys.readouterr().out
    assert code == 1, out
    assert "IREE alone shows the mismatch on the first diverging node, node AveragePool" in out
    record = json.loads((tmp_path / "out" / "reduced" / "reduction.json").read_text())
    assert record["kind"] == "numerics-node" and record["shows_alone"] is True
    reduced = onnx.load(str(tmp_path / "out" / "reduced" / "model.onnx"))
    assert [n.op_type for n in reduced.graph.node] == ["AveragePool"]
    fed = np.load(tmp_path / "out" / "reduced" / "input_0.npy")
    assert (fed >= 0).all()  # Abs's output: the value the node saw, from onnxruntime
    assert (tmp_path / "out" / "reduced" / "expected_0.npy").is_file()


def test_a_passing_model_says_so_and_writes_nothing(tmp_path, capsys):
    assert reduce(tmp_path, SIGMOID) == 0
    assert "pass:" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()


def test_a_malformed_model_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07this is no onnx protobuf")
    assert reduce(tmp_path, bad) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "bad.onnx" in err and "Traceback" not in err


def test_an_output_folder_that_exists_is_refused_without_force(tmp_path, capsys):
    (tmp_path / "out" / "reduced").mkdir(parents=True)
    assert reduce(tmp_path, SIGMOID) == 2
    assert "--force" in capsys.readouterr().err


def test_check_model_reduce_writes_the_reduced_model(tmp_path, capsys, affine_grid):
    code = main(
        ["check-model", str(affine_grid), "--no-benchmark", "--targets", str(TARGETS),
         "--store-dir", str(tmp_path / "store"), "--reduce", "--reduce-dir", str(tmp_path / "r")]
    )  # fmt: skip
    assert code == 1  # check-model's own status: IREE failed
    out = capsys.readouterr().out
    assert "verdict: error at compile" in out and "reduced 113 nodes to 24 (If" in out
    assert (tmp_path / "r" / "reduced" / "model.onnx").is_file()


def test_a_node_that_fails_inside_an_if_branch_is_reached(tmp_path, capsys):
    """issue 53: the If's taken branch is inlined (its condition from onnxruntime), so
    the reduction reaches the failing node inside it; nodes are counted recursively."""
    f = TensorProto.FLOAT
    then = helper.make_graph(
        [
            helper.make_node("Abs", ["r"], ["t1"]),
            helper.make_node("Binarizer", ["t1"], ["t2"], domain="ai.onnx.ml", threshold=0.5),
            helper.make_node("Neg", ["t2"], ["t_out"]),
        ],
        "then",
        [],
        [helper.make_tensor_value_info("t_out", f, [2, 3, 4])],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["r"], ["e_out"])],
        "else",
        [],
        [helper.make_tensor_value_info("e_out", f, [2, 3, 4])],
    )
    nodes = [
        helper.make_node("Relu", ["X"], ["r"]),
        helper.make_node("ReduceSum", ["r"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
        helper.make_node("Sigmoid", ["y"], ["Y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "with_if",
        [helper.make_tensor_value_info("X", f, [2, 3, 4])],
        [helper.make_tensor_value_info("Y", f, [2, 3, 4])],
        initializer=[helper.make_tensor("zero", f, [], [0.0])],
    )
    path = tmp_path / "if_binarizer.onnx"
    onnx.save(
        helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
        ),
        str(path),
    )
    assert reduce(tmp_path, path) == 1
    out = capsys.readouterr().out
    assert "onnx.Binarizer" in out
    assert "reduced 9 nodes to 1 (Binarizer; 1 If node(s) inlined first)" in out
    record = json.loads((tmp_path / "out" / "reduced" / "reduction.json").read_text())
    assert record["nodes_before"] == 9 and record["nodes_after"] == 1
    # a reproducer folder of its own, verified with IREE's tools alone
    assert record["reproducer"]["reproduced"] is True, record
    for name in ("model.onnx", "compile.flags", "run.flags", "repro.sh", "repro.cmd", "ISSUE.md"):
        assert (tmp_path / "out" / "reduced" / name).is_file(), name


@pytest.mark.skipif(not shutil.which("iree-import-onnx"), reason="iree-import-onnx is not on PATH")
def test_the_imported_model_is_reduced_inside_the_if_regions(tmp_path, capsys, affine_grid):
    """ONNX after import, at the MLIR level: the If that IREE cannot legalize keeps
    none of its branches' ops (its regions are reduced too)."""
    import subprocess

    mlir = tmp_path / "affine.mlir"
    subprocess.run(["iree-import-onnx", str(affine_grid), "-o", str(mlir)], check=True)
    assert reduce(tmp_path, mlir) == 1
    out = capsys.readouterr().out
    assert "onnx.If" in out and "reduced 124 ops to 1 (torch.operator)" in out, out
    record = json.loads((tmp_path / "out" / "reduced" / "reduction.json").read_text())
    assert record["reproducer"]["reproduced"] is True
