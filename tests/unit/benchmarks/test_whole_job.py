"""benchmarks/whole_job.py's pieces: what counts as compiled, the profile, the checks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def wj():
    spec = importlib.util.spec_from_file_location("whole_job", ROOT / "benchmarks" / "whole_job.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["whole_job"] = module
    spec.loader.exec_module(module)
    return module


def _outcome(case_id, verdict="pass", status="pass", suite="onnx_ops", **info):
    return {
        "case_id": case_id,
        "target": "llvm-cpu",
        "suite": suite,
        "status": status,
        "verdict": verdict,
        "duration": 2.0,
        "stage_times": {"compile": 1.5, "run": 0.25},
        "info": info,
    }


def test_compiled_reads_the_cache_hits_and_never_counts_a_skip(wj):
    assert wj.compiled(_outcome("a", cache_hits={"import": False, "compile": False}))
    assert not wj.compiled(_outcome("b", cache_hits={"import": True, "compile": True}))
    assert wj.compiled(_outcome("c"))  # no record of a store hit: it compiled
    assert not wj.compiled(_outcome("d", verdict="skip", status="skip"))


def test_profile_books_each_case_once_by_where_it_ran(wj):
    outcomes = [
        _outcome("a", batch={"size": 4}),
        _outcome("b", batch={"size": 4}),
        _outcome("c", batch={"size": 4, "in_batch": "crash", "ran_alone": True}),
        _outcome("d", verdict="xfail", status="error"),
        _outcome("m", suite="onnx_models"),
        _outcome("s", verdict="skip", status="skip"),
        _outcome("o"),
    ]
    table = wj.profile(outcomes, job_cpu=30.0, job_wall=20.0)
    rows = table["rows"]
    assert rows["batched"]["cases"] == 2 and rows["batched"]["compile"] == 3.0
    assert rows["alone after its batch"]["cases"] == 1
    assert rows["known failures (alone)"]["cases"] == 1 and rows["models"]["cases"] == 1
    assert rows["skipped"]["cases"] == 1 and rows["other, alone"]["cases"] == 1
    assert sum(r["cases"] for r in rows.values()) == len(outcomes)
    assert table["in_cases_s"] == 2.0 * len(outcomes)
    lines = wj.format_profile(table, {"cpu_s": 2.5})
    assert lines[2].startswith("| batched") and any("collection" in line for line in lines)


def test_judge_misses_a_reselection_that_compiled(wj):
    def run(cpu, compiled, cases=10):
        return {"cpu_s": cpu, "compiled": compiled, "cases": cases, "verdicts_differ": []}

    figures = {
        "runs": {
            "cold": run(250.0, 10),
            "warm": run(20.0, 0),
            "reselect-k": run(3.0, 0),
            "reselect-sample": run(9.0, 2),
        }
    }
    checks = {label: ok for label, ok, _ in wj.judge(figures)}
    assert checks["cold job CPU"] and checks["warm job CPU"]
    assert checks["warm compiles nothing, same verdicts"] and checks["reselect-k compiles nothing"]
    assert not checks["reselect-sample compiles nothing"]
    figures["runs"]["cold"]["cpu_s"] = 900.0
    assert not dict((label, ok) for label, ok, _ in wj.judge(figures))["cold job CPU"]


def test_import_costs_subtract_the_bare_interpreter_and_name_the_version(wj, monkeypatch):
    spent = iter([0.0, 0.1, 0.1, 0.3, 0.3, 1.8])  # children_cpu before and after each

    monkeypatch.setattr(wj, "children_cpu", lambda: next(spent))
    monkeypatch.setattr(wj.subprocess, "run", lambda *a, **k: None)
    found = wj.import_costs(runs=1)
    # bare 0.1 s; ml_dtypes 0.2 - 0.1; iree.runtime 1.5 - 0.1
    assert found["ml_dtypes"] == 0.1 and found["iree.runtime"] == 1.4, found
    assert found["ml_dtypes_version"]
