"""``repro CASE --reduce``: a real operator test IREE does not compile (onnx's own
``test_affine_grid_2d_expanded``, 63 nodes) is cut to the node that fails, and the
reduced model's own reproducer shows the same first line with IREE's tools alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
CASE = "onnx-ops/test_affine_grid_2d_expanded"


def repro(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "repro",
            CASE,
            "-o",
            str(tmp_path / "r"),
            "--targets",
            str(REPO / "conformance" / "targets.toml"),
            "--store-dir",
            str(tmp_path / "store"),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )


@pytest.mark.skipif(
    not (BIN / "iree-import-onnx").exists(), reason="IREE's tools are not beside this Python"
)
def test_a_compile_failure_is_reduced_and_its_reduced_reproducer_verified(tmp_path):
    proc = repro(tmp_path, "--reduce", "--reduce-budget", "300")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reduced = tmp_path / "r" / "reduced"
    record = json.loads((reduced / "reduction.json").read_text())
    # counted with their subgraphs' nodes: the failing If and its branches' 23
    assert record["nodes_before"] == 113 and record["nodes_after"] == 24, record
    assert record["reproducer"]["reproduced"] is True, record["reproducer"]
    assert "reduced/repro.sh: reproduced" in proc.stdout
    # The reduced reproducer holds what it runs: the model, the case's flags, the scripts.
    for name in ("model.onnx", "compile.flags", "repro.sh", "repro.cmd"):
        assert (reduced / name).is_file(), name
    assert (reduced / "compile.flags").read_text() == (tmp_path / "r" / "compile.flags").read_text()
    # The imported program, op by op (its If's regions too): the If alone, verified.
    imported = json.loads((tmp_path / "r" / "reduced-mlir" / "reduction.json").read_text())
    assert imported["ops_after"] == 1 and imported["reproducer"]["reproduced"] is True, imported
    assert "reduced-mlir/repro.sh: reproduced" in proc.stdout


def test_a_bad_budget_is_refused(tmp_path):
    proc = repro(tmp_path, "--reduce", "--reduce-budget", "0")
    assert proc.returncode == 2 and "seconds above 0" in proc.stderr
    assert not (tmp_path / "r").exists()
