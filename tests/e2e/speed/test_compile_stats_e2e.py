"""Compile statistics with IREE: every compiled case's outcome carries its module size and
dispatch count, a warm run reads them from the store, and ``check-model --dispatches``
lists the dispatches."""

from __future__ import annotations

import json
from pathlib import Path

import onnxruntime

from iree_conformance.cli.main import main

SIGMOID = Path(onnxruntime.__file__).parent / "datasets" / "sigmoid.onnx"


def _stats(tmp_path: Path, name: str, *extra: str) -> dict:
    out = tmp_path / name
    args = ["check-model", str(SIGMOID), "--no-benchmark", "--store-dir", str(tmp_path / "s")]
    assert main([*args, "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_results_carry_compile_statistics_cold_and_warm(tmp_path, capsys):
    cold = _stats(tmp_path, "cold.json")
    stats = cold["metrics"]["compile_stats"]
    assert stats["scope"] == "case" and stats["dispatches"] == 1 and stats["executables"] == 1
    assert stats["module_bytes"] > 1000
    warm = _stats(tmp_path, "warm.json")
    assert warm["info"]["cache_hits"]["compile"] is True
    assert warm["metrics"]["compile_stats"] == stats


def test_check_model_lists_the_dispatches(tmp_path, capsys):
    _stats(tmp_path, "d.json", "--dispatches")
    out = capsys.readouterr().out
    assert "dispatches (1):" in out
    assert "  0: test_sigmoid$async_dispatch_0_elementwise" in out
