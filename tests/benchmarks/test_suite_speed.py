"""Smoke tests of benchmarks/suite_speed.py's pieces (not the benchmark itself)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ss():
    spec = importlib.util.spec_from_file_location("suite_speed", ROOT / "benchmarks" / "suite_speed.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["suite_speed"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tools(ss):
    try:
        return ss.iree_tools()
    except FileNotFoundError as e:
        pytest.skip(str(e))


def test_case_list_is_the_documented_sample(ss):
    onnx_ids, shlo_ids = ss.read_case_list(ss.DEFAULT_CASES_FILE)
    assert len(onnx_ids) >= 100 and len(shlo_ids) >= 20
    assert len(set(onnx_ids)) == len(onnx_ids) and len(set(shlo_ids)) == len(shlo_ids)
    assert set(shlo_ids) <= set(ss.stablehlo_index())
    # the recorded order is the hashed order of the kept cases
    assert ss.hashed_order(shlo_ids) == shlo_ids and ss.hashed_order(onnx_ids) == onnx_ids


def test_read_case_list_rejects_unknown_ids(ss, tmp_path):
    path = tmp_path / "cases.txt"
    path.write_text("# comment\nonnx-ops/test_a  # trailing\n\nstablehlo/b\n")
    assert ss.read_case_list(path) == (["onnx-ops/test_a"], ["stablehlo/b"])
    path.write_text("zoo/x\n")
    with pytest.raises(ValueError, match="unknown case id"):
        ss.read_case_list(path)


def test_quick_and_default_sizes(ss):
    args = ss.parse_args([])
    assert (args.onnx, args.stablehlo, args.workers, args.memory_jobs) == (100, 20, 2, 1000)
    quick = ss.parse_args(["--quick"])
    assert (quick.onnx, quick.stablehlo, quick.memory_jobs, quick.profile_rounds) == (10, 5, 100, 1)
    assert (args.baseline_tools, quick.baseline_tools) == ("both", "scripts")


def test_native_tools_are_the_wheels_binaries(ss):
    try:
        native = ss.iree_tools(native=True)
    except FileNotFoundError as e:
        pytest.skip(str(e))
    compile_, run = Path(native["compile"]), Path(native["run"])
    assert (compile_.parent.name, compile_.name) == ("_mlir_libs", "iree-compile" + ss.EXE)
    assert (run.parent.name, run.name) == ("_runtime_libs", "iree-run-module" + ss.EXE)
    with open(compile_, "rb") as f:
        assert binary_format(f.read(4)) in NATIVE_FORMATS[sys.platform]


#: The first bytes of an executable, per format (64-bit little-endian Mach-O; a
#: universal2 wheel's binaries may be fat files).
MAGIC = {
    b"\x7fELF": "elf",
    b"\xcf\xfa\xed\xfe": "mach-o",
    b"\xca\xfe\xba\xbe": "mach-o-fat",
}
NATIVE_FORMATS = {"linux": {"elf"}, "darwin": {"mach-o", "mach-o-fat"}, "win32": {"pe"}}


def binary_format(head: bytes) -> str:
    if head[:2] == b"MZ":
        return "pe"
    return MAGIC.get(head[:4], f"unknown {head[:4]!r}")


def test_binary_format_knows_each_os_executables():
    assert binary_format(b"\x7fELF") == "elf"
    assert binary_format(bytes.fromhex("cffaedfe")) == "mach-o"  # arm64 and x86_64 Mach-O
    assert binary_format(bytes.fromhex("cafebabe")) == "mach-o-fat"
    assert binary_format(b"MZ\x90\x00") == "pe"
    assert binary_format(b"#!/u").startswith("unknown")


def test_import_needs_no_resource_module(monkeypatch):
    """Windows has no ``resource``; the module must import and count CPU as unknown."""
    monkeypatch.setitem(sys.modules, "resource", None)  # import resource -> ImportError
    spec = importlib.util.spec_from_file_location("suite_speed_nores", ROOT / "benchmarks" / "suite_speed.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "suite_speed_nores", module)  # dataclasses look it up
    spec.loader.exec_module(module)
    assert module.children_cpu() == 0.0
    assert module.counts_children_cpu() is False


def test_baseline_pipeline_on_two_stablehlo_cases(ss, tools, tmp_path):
    ids = ["stablehlo/add_f32", "stablehlo/compare_f32"]
    plans = ss.plan_baseline(ids, tmp_path)
    assert [p.case_id for p in plans] == ids
    assert "--iree-input-type=stablehlo" in plans[0].compile_flags
    assert "--iree-hal-local-target-device-backends=llvm-cpu" in plans[0].compile_flags
    results = [ss.run_baseline_case(p, tools) for p in plans]
    for result in results:
        assert result["status"] == "pass", result["message"]
        assert {"compile", "run", "compare"} <= set(result["stage_times"])
    # The numbers that iree-run-module wrote are the corpus's expected values.
    corpus = ROOT / "conformance" / "stablehlo" / "cases"
    with np.load(corpus / "add_f32.npz") as data:
        actual = np.load(Path(plans[0].work_dir) / "actual_0_0.npy")
        np.testing.assert_allclose(actual, data["expected_0"], rtol=1e-6)
        np.testing.assert_allclose(actual, data["input_0"] + data["input_1"], rtol=1e-6)
    with np.load(corpus / "compare_f32.npz") as data:
        outputs = sorted(Path(plans[1].work_dir).glob("actual_0_*.npy"))
        assert len(outputs) == sum(1 for k in data.files if k.startswith("expected_"))
        for k, path in enumerate(sorted(outputs, key=lambda p: int(p.stem.rsplit("_", 1)[1]))):
            got = np.load(path)
            assert got.dtype == np.bool_
            np.testing.assert_array_equal(got, data[f"expected_{k}"])
    # A wrong expected value is a failure at compare, not a pass.
    expected = Path(plans[0].data_sets[0][1][0])
    np.save(expected, np.load(expected) + 1.0)
    assert ss.numpy_compare(actual, np.load(expected), None, None).startswith("values differ")


def test_baseline_reports_a_compile_error(ss, tools, tmp_path):
    plan = ss.plan_baseline(["stablehlo/add_f32"], tmp_path)[0]
    broken = tmp_path / "broken.mlir"
    broken.write_text("func.func @main( {\n")
    plan.source = str(broken)
    result = ss.run_baseline_case(plan, tools)
    assert (result["status"], result["stage"]) == ("error", "compile")
    assert "iree-compile exited" in result["message"]


def test_numpy_compare(ss):
    f = np.array([1.0, 2.0, np.nan], np.float32)
    assert ss.numpy_compare(f, f.copy(), None, None) is None
    assert ss.numpy_compare(f + 1e-7, f, None, None) is None
    assert "values differ" in ss.numpy_compare(f + 1e-3, f, None, None)
    assert ss.numpy_compare(f + 1e-3, f, 1e-2, 1e-2) is None
    assert "shape" in ss.numpy_compare(f[:2], f, None, None)
    i = np.array([1, 2], np.int64)
    assert ss.numpy_compare(i, i.copy(), None, None) is None
    assert ss.numpy_compare(i + 1, i, 1.0, 1.0) == "values differ"


def test_entry_from_mlir(ss, tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(
        'module {\n  func.func private @helper(%a: i32) -> i32\n'
        '  func.func @test_add_bcast(%arg0: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32> {\n  }\n}\n'
    )
    assert ss.entry_from_mlir(path) == "test_add_bcast"
    path.write_text('func.func @"odd name"(%a: i32) -> i32 {\n}\n')
    assert ss.entry_from_mlir(path) == "odd name"


def _outcome(case_id, duration, **stages):
    return {"case_id": case_id, "status": "pass", "duration": duration, "stage_times": stages}


def test_overhead_stats_subtracts_iree_time(ss):
    outcomes = [
        _outcome("a", 1.010, compile=0.9, load=0.05, run=0.05, inputs=0.004),
        _outcome("b", 0.030, store=0.001, load=0.01, run=0.01, compare=0.002),
        {"case_id": "c", "status": "skip", "duration": 0.0, "stage_times": {}},
    ]
    stats = ss.overhead_stats(outcomes)
    assert stats["count"] == 2
    assert stats["mean_ms"] == pytest.approx(10.0, abs=1e-6)
    assert stats["split_ms_mean"]["inputs"] == pytest.approx(2.0)
    assert stats["split_ms_mean"]["other (IPC, job, worker start)"] == pytest.approx((6.0 + 7.0) / 2)
    assert ss.overhead_stats([]) == {"count": 0}


def test_shard_balance(ss):
    durations = {f"llvm-cpu:c{i}": float(1 + i % 7) for i in range(60)}
    balance = ss.shard_balance(durations, counts=(2, 4))
    assert set(balance) == {2, 4}
    assert all(v["spread"] <= 0.10 for v in balance.values())


def test_read_proc_status(ss):
    if not Path(f"/proc/{os.getpid()}/status").exists():
        pytest.skip("no /proc")
    status = ss.read_proc_status(os.getpid())
    assert status["VmRSS"] > 1 << 20 and status["VmHWM"] >= status["VmRSS"]
    assert ss.read_proc_status(2**22 + 12345) == {}


def test_cold_variant_changes_only_the_source(ss, tmp_path):
    from iree_conformance.cases import NpzCase

    src = tmp_path / "a.mlir"
    src.write_text("func.func @main() {\n  return\n}\n")
    case = NpzCase(case_id="t/a", suite="stablehlo", kind="mlir", source_path=src)
    variant = ss.cold_variant(case, "x-1")
    assert variant.source_bytes.startswith(src.read_bytes()) and variant.source_bytes != src.read_bytes()
    assert (variant.case_id, variant.source_path) == (case.case_id, case.source_path)


def test_report_prints_ratios_and_verdicts(ss):
    figures = {
        "machine": {"nproc": 2, "cpu": "X", "ram_gib": 8, "platform": "p", "python": "3", "versions": {}, "loadavg_start": [1.0]},
        "workers": 2,
        "sample": {"onnx": 1, "stablehlo": 1, "file": "f"},
        "rounds": [
            {
                "baseline": {"cases": 2, "passed": 2, "wall_s": 10.0, "cases_per_min": 12.0, "cpu_s": 8.0, "cpu_s_per_case": 4.0, "loadavg_after": []},
                "cold": {"cases": 2, "passed": 2, "wall_s": 4.0, "cases_per_min": 30.0, "cpu_s": 3.0, "cpu_s_per_case": 1.5, "loadavg_after": []},
            }
        ],
        "memory_jobs": 1000,
        "memory_cold_every": 10,
    }
    mb = 2**20
    samples = [{"job": j, "pid": 7, "rss": (200 + 60 * j // 1000) * mb, "hwm": (210 + 60 * j // 1000) * mb, "cold": False} for j in range(1, 1001)]
    figures["memory"] = {"recycling off": ss.summarize_memory({"samples": samples, "statuses": {"pass": 1000}, "pids": [7], "wall_s": 1.0, "max_jobs": None})}
    assert figures["memory"]["recycling off"]["rss_growth_mb"] == 54.0
    figures["ratios"] = ss.median_ratios([ss.round_ratios(figures["rounds"][0])])
    assert figures["ratios"] == {"cold_vs_baseline": 2.5, "cold_vs_baseline_cpu": 2.67}
    figures["ratios"]["warm_vs_cold"] = 10.0
    figures["verdicts"] = ss.judge(figures)
    text = ss.format_report(figures)
    assert "MET    cold >= 2.5x baseline, cases/min: 2.50x" in text
    assert "MET    cold >= 2.5x baseline, CPU seconds: 2.67x" in text
    assert "MISSED warm >= 20x cold, cases/min: 10.00x" in text
    assert "MISSED worker RSS growth" in text
    assert "NOTE" not in text


def test_report_from_a_saved_json(ss, tmp_path, capsys):
    rounds = [
        {"cold": {"cases_per_min": 30.0, "cpu_s": 3.0}, "baseline": {"cases_per_min": 12.0, "cpu_s": 6.0}},
        {"cold": {"cases_per_min": 60.0, "cpu_s": 3.0}, "baseline": {"cases_per_min": 12.0, "cpu_s": 6.3}},
    ]
    for r in rounds:
        r["ratios"] = ss.round_ratios(r)
    assert [r["ratios"]["cold_vs_baseline"] for r in rounds] == [2.5, 5.0]
    assert ss.unstable_ratios(rounds) == ["cold_vs_baseline 2.50-5.00"]
    figures = {
        "machine": {"nproc": 2, "cpu": "X", "ram_gib": 8, "platform": "p", "python": "3", "versions": {}, "loadavg_start": []},
        "workers": 2,
        "sample": {"onnx": 1, "stablehlo": 1, "file": "f"},
        "rounds": [],
        "ratios": ss.median_ratios([r["ratios"] for r in rounds]),
        "shards": {2: {"max_s": 10.0, "min_s": 9.5, "spread": 0.05}},
    }
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(figures))
    assert ss.main(["--report-from", str(path)]) == 0
    out = capsys.readouterr().out
    assert "MET    cold >= 2.5x baseline, cases/min: 3.75x" in out
    assert "MET    --shard I/2 within 10% on recorded durations: spread 5.0%" in out


def test_baseline_work_dirs_differ_when_case_is_folded(ss, tmp_path):
    plans = ss.plan_baseline(["onnx-ops/test_elu", "onnx-ops/test_ELU"], tmp_path)
    folded = {Path(p.work_dir).name.casefold() for p in plans}
    assert len(folded) == 2
