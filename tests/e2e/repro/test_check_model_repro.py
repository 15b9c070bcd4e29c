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


def check_model(tmp_path: Path, model: Path) -> subprocess.CompletedProcess:
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
