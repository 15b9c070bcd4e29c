"""``iree-conformance reduce PROGRAM.mlir``: a StableHLO program whose LAPACK
``custom_call`` IREE does not lower is cut to that op, its folder verified with IREE's
tools; a program that compiles, and a missing file, are said plainly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
needs_tools = pytest.mark.skipif(
    not (BIN / "iree-compile").exists(), reason="IREE's tools are not beside this Python"
)
FAILING = """module {
  func.func @main(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<4x4xf32>
    %2:2 = stablehlo.custom_call @lapack_spotrf_ffi(%1) : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<i32>)
    %3 = stablehlo.tanh %2#0 : tensor<4x4xf32>
    %4 = stablehlo.multiply %3, %1 : tensor<4x4xf32>
    return %4 : tensor<4x4xf32>
  }
}
"""
PASSING = """module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


def reduce(tmp_path: Path, program: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "reduce",
            program,
            "--targets",
            str(REPO / "conformance" / "targets.toml"),
            "--store-dir",
            str(tmp_path / "store"),
            *extra,
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )


@needs_tools
def test_an_mlir_compile_failure_is_cut_to_its_op_and_verified(tmp_path):
    (tmp_path / "chol.mlir").write_text(FAILING)
    proc = reduce(tmp_path, "chol.mlir", "-o", "out")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "reduced 5 ops to 1 (stablehlo.custom_call)" in proc.stdout
    record = json.loads((tmp_path / "out" / "reduced" / "reduction.json").read_text())
    assert record["reproducer"]["reproduced"] is True, record
    assert "Reduced from 5 to 1 ops" in (tmp_path / "out" / "reduced" / "ISSUE.md").read_text()
    assert not (tmp_path / "chol-reduced").exists()  # -o only


@needs_tools
def test_a_program_that_compiles_writes_nothing(tmp_path):
    (tmp_path / "ok.mlir").write_text(PASSING)
    proc = reduce(tmp_path, "ok.mlir", "-o", "out")
    assert proc.returncode == 0 and "pass:" in proc.stdout, proc.stdout + proc.stderr
    assert not (tmp_path / "out" / "reduced").exists()


def test_a_missing_program_is_a_one_line_error(tmp_path):
    proc = reduce(tmp_path, "missing.mlir", "-o", "out")
    assert proc.returncode == 2 and "missing.mlir: no such file" in proc.stderr
    assert "Traceback" not in proc.stderr
