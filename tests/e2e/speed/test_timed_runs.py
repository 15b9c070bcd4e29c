"""Timed runs end to end: check-model's Benchee table against onnxruntime, and JAX cases and
bundled StableHLO cases timed against XLA in the worker (pytest conformance in a
subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

import onnxruntime
import pytest

from iree_conformance.cli.main import main
from tests.support.core_helpers import run_conformance_pytest
from tests.support.jax_cases import CASES

# A model shipped in the onnxruntime wheel (a dependency), not written here.
SIGMOID = Path(onnxruntime.__file__).parent / "datasets" / "sigmoid.onnx"


def test_check_model_prints_the_benchee_table(tmp_path, capsys):
    out_json = tmp_path / "o.json"
    code = main(
        [
            "check-model",
            str(SIGMOID),
            "--store-dir",
            str(tmp_path / "store"),
            "--json",
            str(out_json),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    table = out[out.index("Name") :]
    assert table.split()[:7] == ["Name", "ips", "average", "deviation", "median", "99th", "%"]
    assert "onnxruntime" in table and "iree" in table
    assert "ratio IREE/onnxruntime (medians)" in out
    assert "compile:" in out and "run memory growth:" in out and "cost of timing:" in out
    bench = json.loads(out_json.read_text())["metrics"]["benchmark"]
    assert bench["reference"]["interleaved"] is True
    assert len(bench["reference"]["samples_s"]) == len(bench["iree"]["samples_s"])
    assert bench["compile"]["module_bytes"] > 0
    assert bench["memory"]["run_peak_rss_bytes"] > 0 and bench["memory"]["calls"] > 0
    assert (
        bench["memory"]["rss_growth_bytes"] >= 0
        and bench["memory"]["allocated_bytes"]["device"] > 0
    )


def _store_files(store: Path) -> set[Path]:
    return {p for p in store.rglob("*") if p.is_file()}


def test_a_warm_check_model_keeps_to_the_budget_and_full_takes_every_figure(tmp_path, capsys):
    """check-model's default (full) records the reference's set-up in the store; a warm
    budgeted run writes nothing and gives figures that say what the budget left out;
    --timing-budget full gives them all, interleaved (docs/speed.md, "Cost")."""
    store = tmp_path / "store"
    out_json = tmp_path / "o.json"
    args = ["check-model", str(SIGMOID), "--store-dir", str(store), "--json", str(out_json)]
    assert main([*args, "--timing-budget", "0.05"]) == 0  # cold, budgeted: no set-up known
    bench = json.loads(out_json.read_text())["metrics"]["benchmark"]
    assert "has not been timed on this machine" in bench["reference_missing"]
    assert not _store_files(store / "timing")
    assert main(args) == 0  # the default for one model: full
    records = _store_files(store / "timing")
    assert len(records) == 2  # onnxruntime's import and this model's session
    before = _store_files(store)
    capsys.readouterr()
    args = [*args, "--timing-budget", "0.05"]
    assert main(args) == 0
    assert _store_files(store) == before, "a warm run wrote to the store"
    out = capsys.readouterr().out
    bench = json.loads(out_json.read_text())["metrics"]["benchmark"]
    assert "cost of timing:" in out
    if "reference" in bench:
        assert bench["reference"]["samples_s"] and bench["ratio"] > 0
    else:
        assert "budget" in bench["reference_missing"], bench["reference_missing"]
        assert "no reference timing:" in out
    if bench["iree"].get("from_checked_run"):
        assert bench["iree"]["samples_s"] and len(bench["iree"]["samples_s"]) == 1
        assert "its checked run" in out
    # --timing-budget full, and --benchmark or --timing-runs N asked for (issue 45): every
    # figure on the warm store, whatever the budget says
    for extra, runs in ((["--timing-budget", "full"], 20), (["--benchmark"], 20),
                        (["--timing-runs", "25", "--timing-budget", "0.5"], 25)):  # fmt: skip
        assert main([*args, *extra]) == 0
        bench = json.loads(out_json.read_text())["metrics"]["benchmark"]
        assert bench["reference"]["interleaved"] is True, extra
        assert len(bench["iree"]["samples_s"]) == len(bench["reference"]["samples_s"]) >= runs
        assert "from_checked_run" not in bench["iree"]


def test_check_model_no_benchmark_prints_no_table(tmp_path, capsys):
    assert main(["check-model", str(SIGMOID), "--no-benchmark", "--no-cache"]) == 0
    assert "Name" not in capsys.readouterr().out


def test_jax_cases_are_timed_against_xla_in_the_worker(tmp_path):
    """Both cases pass (in a batch or alone) with IREE's and XLA's samples interleaved."""
    pytest.importorskip("jax", reason="XLA's timing needs JAX: pip install -e '.[jax]'")
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "mine.py").write_text(CASES, encoding="utf-8")
    report = tmp_path / "results.json"
    proc = run_conformance_pytest(
        "-k",
        "ext",
        "--jax-dir",
        str(cases),
        "--store-dir",
        str(tmp_path / "store"),
        "--benchmark",
        "--timing-budget",
        "full",
        "--report-json",
        str(report),
        suite="jax",
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    outcomes = {o["case_id"]: o for o in json.loads(report.read_text())["outcomes"]}
    assert set(outcomes) == {"jax/ext/mine/scaled_tanh", "jax/ext/mine/cumsum"}
    for o in outcomes.values():
        assert o["status"] == "pass", o
        assert (o["info"].get("batch") or {}).get("in_batch", "pass") == "pass", o["info"]
        bench = o["metrics"]["benchmark"]
        ref = bench["reference"]
        assert ref["name"] == "xla" and ref["interleaved"] is True
        assert len(ref["samples_s"]) == len(bench["iree"]["samples_s"]) >= 1
        assert bench["ratio"] > 0 and "reference_missing" not in bench


def test_bundled_stablehlo_cases_are_timed_against_xla_in_their_batch(tmp_path):
    """Batch members timed beside XLA on their own file; a dynamic program keeps IREE's
    figures with XLA's one-line reason; the verdicts are those of the untimed run."""
    pytest.importorskip("jax", reason="XLA's timing needs JAX: pip install -e '.[jax]'")
    common = ["-k", "add_i64 or convolution_nhwc or dynamic_matmul"]
    common += ["--store-dir", str(tmp_path / "store")]
    runs = {}
    timed_args = ["--benchmark", "--timing-budget", "full"]  # warm: the default budget is small
    for name, extra in (("untimed", []), ("timed", timed_args)):
        report = tmp_path / f"{name}.json"
        proc = run_conformance_pytest(*common, *extra, "--report-json", str(report))
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        runs[name] = {o["case_id"]: o for o in json.loads(report.read_text())["outcomes"]}
    timed = runs["timed"]
    assert set(timed) == {
        "stablehlo/add_i64",
        "stablehlo/convolution_nhwc_stride2_pad1",
        "stablehlo/dynamic_matmul",
    }
    assert {k: o["status"] for k, o in timed.items()} == {
        k: o["status"] for k, o in runs["untimed"].items()
    }
    for case_id, o in timed.items():
        assert o["status"] == "pass" and o["info"]["batch"]["size"] == 3, o
        bench = o["metrics"]["benchmark"]
        assert bench["iree"]["summary"]["median_s"] > 0
        if case_id == "stablehlo/dynamic_matmul":
            missing = bench["reference_missing"]
            assert "XLA could not compile dynamic_matmul.mlir" in missing and "\n" not in missing
            assert "reference" not in bench and "ratio" not in bench
            continue
        ref = bench["reference"]
        assert ref["name"] == "xla" and ref["interleaved"] is True and ref["version"]
        assert len(ref["samples_s"]) == len(bench["iree"]["samples_s"]) >= 1
        assert bench["ratio"] > 0 and "reference_missing" not in bench
