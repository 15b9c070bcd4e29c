"""MLIR sources cut to the failing function (frontends/mlir_cut.py), checked with
iree-compile: the cut module fails with the same normalized first line, and holds only
the failing function and what it calls."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iree_conformance.common.diagnostics import normalize
from iree_conformance.frontends.mlir_cut import NOT_REDUCED, cut_to_failing_function

MODULE = """module {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  util.global private @unused = 1 : i32
  func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> attributes {noinline} {
    %0 = stablehlo.exponential %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @bad(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = func.call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @lapack_thing(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
  func.func @other(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = func.call @bad(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.negate %0 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
"""


def _first_error(path: Path) -> str:
    tool = shutil.which("iree-compile") or str(Path(sys.executable).with_name("iree-compile"))
    run = subprocess.run(
        [tool, str(path), "--iree-input-type=stablehlo", "--iree-hal-target-device=local",
         "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=generic",
         "-o", str(path.with_suffix(".vmfb"))],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode != 0, "the module compiled"
    return next(line for line in run.stderr.splitlines() if "error:" in line)


def test_the_cut_keeps_the_failing_function_and_its_callees(tmp_path):
    whole = tmp_path / "whole.mlir"
    whole.write_text(MODULE)
    first = _first_error(whole)
    assert "stablehlo.custom_call" in first
    cut = cut_to_failing_function(MODULE, first)
    assert cut is not None and cut.function == "bad"
    assert cut.kept == ("bad", "helper") and set(cut.dropped) == {"main", "other"}
    assert "@main" not in cut.text and "@other" not in cut.text
    assert "util.global private @unused" in cut.text  # top-level ops that are no function
    assert "func.func @bad" in cut.text  # made public: nothing calls it any more
    assert NOT_REDUCED in cut.summary()
    alone = tmp_path / "cut.mlir"
    alone.write_text(cut.text)
    assert normalize(_first_error(alone)) == normalize(first)


@pytest.mark.parametrize("line", ["error: no location", "m.mlir:1:1: error: at the module"])
def test_an_error_outside_every_function_is_not_cut(line):
    assert cut_to_failing_function(MODULE, line) is None
