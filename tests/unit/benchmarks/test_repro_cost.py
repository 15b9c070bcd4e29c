"""benchmarks/repro_cost.py's pieces: the run order, the ratio and the green-case check."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def rc():
    spec = importlib.util.spec_from_file_location(
        "repro_cost", ROOT / "benchmarks" / "repro_cost.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["repro_cost"] = module
    spec.loader.exec_module(module)
    return module


def test_the_sides_alternate_a_b_b_a(rc):
    assert rc.order(2) == ["without", "with", "with", "without"]
    three = rc.order(3)
    assert three.count("with") == three.count("without") == 3


def _run(side, cpu, greens=()):
    return {"side": side, "cpu_s": cpu, "green_with_repro": list(greens)}


def test_judge_is_the_ratio_of_the_sums_against_the_target(rc):
    met = {
        "runs": [
            _run("without", 10.0),
            _run("with", 10.5),
            _run("with", 11.0),
            _run("without", 10.0),
        ]
    }
    ratio, ok, greens = rc.judge(met)
    assert ratio == pytest.approx(21.5 / 20.0) and ok and greens == []
    missed = {"runs": [_run("without", 10.0), _run("with", 12.0, ["llvm-cpu/onnx-ops/test_abs"])]}
    ratio, ok, greens = rc.judge(missed)
    assert ratio == pytest.approx(1.2) and not ok and greens == ["llvm-cpu/onnx-ops/test_abs"]


def test_a_green_case_with_a_folder_or_an_info_repro_is_named(rc, tmp_path):
    (tmp_path / "llvm-cpu" / "onnx-ops" / "test_red").mkdir(parents=True)
    (tmp_path / "llvm-cpu" / "onnx-ops" / "test_red" / "repro.json").write_text("{}")
    written = rc.folders(tmp_path)
    assert written == {"llvm-cpu/onnx-ops/test_red"}
    outcomes = [
        {
            "target": "llvm-cpu",
            "case_id": "onnx-ops/test_red",
            "verdict": "xfail",
            "info": {"repro": {}},
        },
        {"target": "llvm-cpu", "case_id": "onnx-ops/test_abs", "verdict": "pass", "info": {}},
        {
            "target": "llvm-cpu",
            "case_id": "onnx-ops/test_add",
            "verdict": "pass",
            "info": {"repro": {"folder": "x"}},
        },
    ]
    assert rc.green_with_repro(outcomes, written) == ["llvm-cpu/onnx-ops/test_add"]
