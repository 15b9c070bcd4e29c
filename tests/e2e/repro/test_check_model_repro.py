"""``check-model MODEL --repro-dir DIR``: a model IREE does not compile (onnx.Binarizer,
made by onnx's helper) gets a reproducer that IREE's tools verify; a passing one none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")
REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def _model(path: Path, op: str, domain: str, **attrs) -> Path:
    h, f = onnx.helper, onnx.TensorProto.FLOAT
    graph = h.make_graph(
        [h.make_node(op, ["x"], ["y"], domain=domain, **attrs)],
        "g",
        [h.make_tensor_value_info("x", f, [3, 4])],
        [h.make_tensor_value_info("y", f, [3, 4])],
    )
    opsets = [h.make_opsetid("", 17)] + ([h.make_opsetid(domain, 3)] if domain else [])
    onnx.save(h.make_model(graph, opset_imports=opsets), path)
    return path


def check_model(tmp_path: Path, model: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "check-model",
            str(model),
            "--no-benchmark",
            "--targets",
            str(REPO / "conformance" / "targets.toml"),
            "--store-dir",
            str(tmp_path / "store"),
            "--repro-dir",
            str(tmp_path / "rd"),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )


@pytest.mark.skipif(
    not (BIN / "iree-compile").exists(), reason="IREE's tools are not beside this Python"
)
def test_a_compile_failure_gets_a_verified_reproducer(tmp_path):
    proc = check_model(
        tmp_path, _model(tmp_path / "binarizer.onnx", "Binarizer", "ai.onnx.ml", threshold=0.5)
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "reproduced with IREE's tools alone" in proc.stdout
    folder = tmp_path / "rd" / "llvm-cpu" / "onnx-dir" / "binarizer.onnx"
    record = json.loads((folder / "repro.json").read_text())
    assert record["stage"] == "compile" and record["reproduced"] is True
    assert "onnx.Binarizer" in (folder / "input.mlir").read_text()


@pytest.mark.skipif(
    not (BIN / "iree-compile").exists(), reason="IREE's tools are not beside this Python"
)
def test_a_passing_model_gets_none(tmp_path):
    proc = check_model(tmp_path, _model(tmp_path / "relu.onnx", "Relu", ""))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tmp_path / "rd").exists()


def _chain(path: Path) -> Path:
    """Relu -> Binarizer -> Neg: the Binarizer is what IREE does not compile."""
    h, f = onnx.helper, onnx.TensorProto.FLOAT
    graph = h.make_graph(
        [
            h.make_node("Relu", ["x"], ["a"]),
            h.make_node("Binarizer", ["a"], ["b"], domain="ai.onnx.ml", threshold=0.5),
            h.make_node("Neg", ["b"], ["y"]),
        ],
        "g",
        [h.make_tensor_value_info("x", f, [3, 4])],
        [h.make_tensor_value_info("y", f, [3, 4])],
    )
    opsets = [h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)]
    onnx.save(h.make_model(graph, opset_imports=opsets), path)
    return path


@pytest.mark.skipif(
    not (BIN / "iree-compile").exists(), reason="IREE's tools are not beside this Python"
)
def test_reduce_with_a_repro_dir_writes_the_reduced_reproducer_beside_the_whole(tmp_path):
    """issue 53: the reduced model went to ./<model>-reduced/, with no ISSUE.md or flags."""
    work = tmp_path / "work"
    work.mkdir()
    proc = check_model(work, _chain(tmp_path / "chain.onnx"), "--reduce")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert sorted(p.name for p in work.iterdir()) == ["rd", "store"]  # nothing else here
    reduced = work / "rd" / "llvm-cpu" / "onnx-dir" / "chain.onnx" / "reduced"
    for name in ("model.onnx", "compile.flags", "run.flags", "repro.sh", "repro.cmd", "ISSUE.md"):
        assert (reduced / name).is_file(), name
    assert "Reduced from 3 to 1 nodes" in (reduced / "ISSUE.md").read_text()
    record = json.loads((reduced / "reduction.json").read_text())
    assert record["nodes_after"] == 1 and record["reproducer"]["reproduced"] is True, record
    ran = subprocess.run(
        ["sh", "repro.sh"], cwd=reduced, env={"PATH": f"{BIN}:/usr/bin:/bin"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 1 and "onnx.Binarizer" in ran.stderr
