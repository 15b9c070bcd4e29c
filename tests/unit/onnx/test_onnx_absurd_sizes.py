"""Absurd sizes are refused before anything is allocated, saying what was too big
(issue 47 item 12, 15; issue 46): bench --sizes, check-model --dim, a spec's sizes and a
spec's negative seed. Runs that could allocate are children under a 4 GiB limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from iree_conformance.cli.main import main
from iree_conformance.common.process_group import launched
from iree_conformance.frontends.onnx.model_inputs import InputTooLarge, check_input_size
from iree_conformance.frontends.onnx.specs import SpecError, load_toml_spec_text
from tests.support import symbolic_models as sm

REPO = Path(__file__).resolve().parents[3]
LIMIT = 4 * 2**30


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        launched([sys.executable, "-m", "iree_conformance.cli.main", *args], address_space=LIMIT),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_bench_sizes_too_large_is_exit_2_naming_the_size(capsys) -> None:
    assert main(["bench", "--sizes", "4,1000000000000"]) == 2
    err = capsys.readouterr().err
    assert "--sizes 1000000000000: a softmax of 1,000,000,000,000 float32 values" in err
    assert "MemoryError" not in err


@pytest.fixture
def batch_model(tmp_path: Path) -> Path:
    path = tmp_path / "batch.onnx"
    onnx.save(sm.batch_model(), str(path))
    return path


def test_check_model_dim_of_10_to_the_12_is_exit_2_before_it_allocates(batch_model, tmp_path):
    dim = next(d.dim_param for d in sm.batch_model().graph.input[0].type.tensor_type.shape.dim)
    result = cli(
        "check-model",
        str(batch_model),
        "--dim",
        f"{dim}=1000000000000",
        "--store-dir",
        str(tmp_path / "store"),
    )
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "would take" in result.stderr and "GiB to draw" in result.stderr, result.stderr
    assert "MemoryError" not in result.stdout + result.stderr


@pytest.mark.parametrize("size", ["-1", "x"])
def test_check_model_dim_that_is_no_size_is_exit_2(batch_model, size):
    result = cli("check-model", str(batch_model), "--dim", f"N={size}")
    assert result.returncode == 2 and "expected NAME=SIZE" in result.stderr


def test_an_input_too_large_to_draw_says_its_shape_and_size() -> None:
    with pytest.raises(
        InputTooLarge,
        match=r"input 'x': shape 1000000x1000000 of float32 would "
        r"take 7,450.6 GiB to draw",
    ):
        check_input_size("x", (10**6, 10**6), np.dtype(np.float32))
    check_input_size("x", (1024, 1024), np.dtype(np.float32))  # 8 MiB: fine


def test_a_spec_seed_below_0_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="seed must be a whole number, 0 or more, got -1"):
        load_toml_spec_text("seed = -1\n", "m.inputs.toml")


def test_check_model_with_a_spec_seed_below_0_is_exit_3(batch_model, tmp_path):
    (batch_model.parent / "batch.inputs.toml").write_text("seed = -1\n", encoding="utf-8")
    result = cli("check-model", str(batch_model), "--store-dir", str(tmp_path / "store"))
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "batch.inputs.toml:1: seed must be a whole number, 0 or more" in result.stderr
