"""Smoke tests of benchmarks/suite_speed.py's pieces (benchmarks/suitespeed/, not the
benchmark itself)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import suite_speed
from benchmarks.suitespeed import (
    baseline,
    batch_size,
    bisection,
    machine,
    memory,
    outcome_stats,
    ratios,
    report,
    sample,
    targets,
    threads,
)

ROOT = Path(__file__).resolve().parents[3]


def test_case_list_is_the_documented_sample():
    onnx_ids, shlo_ids = sample.read_case_list(sample.DEFAULT_CASES_FILE)
    assert len(onnx_ids) >= 100 and len(shlo_ids) >= 20
    assert len(set(onnx_ids)) == len(onnx_ids) and len(set(shlo_ids)) == len(shlo_ids)
    assert set(shlo_ids) <= set(sample.stablehlo_index())
    # the recorded order is the hashed order of the kept cases
    assert sample.hashed_order(shlo_ids) == shlo_ids and sample.hashed_order(onnx_ids) == onnx_ids


def test_read_case_list_rejects_unknown_ids(tmp_path):
    path = tmp_path / "cases.txt"
    path.write_text("# comment\nonnx-ops/test_a  # trailing\n\nstablehlo/b\n")
    assert sample.read_case_list(path) == (["onnx-ops/test_a"], ["stablehlo/b"])
    path.write_text("zoo/x\n")
    with pytest.raises(ValueError, match="unknown case id"):
        sample.read_case_list(path)


def test_quick_and_default_sizes():
    args = suite_speed.parse_args([])
    assert (args.onnx, args.stablehlo, args.workers, args.memory_jobs) == (100, 20, 2, 1000)
    quick = suite_speed.parse_args(["--quick"])
    assert (quick.onnx, quick.stablehlo, quick.memory_jobs, quick.profile_rounds) == (10, 5, 100, 1)
    assert (args.baseline_tools, quick.baseline_tools) == ("both", "scripts")


def test_native_tools_are_the_wheels_binaries():
    try:
        native = baseline.iree_tools(native=True)
    except FileNotFoundError as e:
        pytest.skip(str(e))
    compile_, run = Path(native["compile"]), Path(native["run"])
    assert (compile_.parent.name, compile_.name) == ("_mlir_libs", "iree-compile" + baseline.EXE)
    assert (run.parent.name, run.name) == ("_runtime_libs", "iree-run-module" + baseline.EXE)
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


def test_import_needs_no_resource_module():
    """Windows has no ``resource``; the command line and every measurement module must
    import and count CPU as unknown (in a fresh interpreter, where no module has it)."""
    code = (
        "import sys; sys.modules['resource'] = None\n"  # import resource -> ImportError
        "import benchmarks.suite_speed\n"
        "from benchmarks.suitespeed import machine, run\n"
        "print(machine.children_cpu(), machine.counts_children_cpu())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0.0", "False"]


def test_numpy_compare():
    f = np.array([1.0, 2.0, np.nan], np.float32)
    assert baseline.numpy_compare(f, f.copy(), None, None) is None
    assert baseline.numpy_compare(f + 1e-7, f, None, None) is None
    assert "values differ" in baseline.numpy_compare(f + 1e-3, f, None, None)
    assert baseline.numpy_compare(f + 1e-3, f, 1e-2, 1e-2) is None
    assert "shape" in baseline.numpy_compare(f[:2], f, None, None)
    i = np.array([1, 2], np.int64)
    assert baseline.numpy_compare(i, i.copy(), None, None) is None
    assert baseline.numpy_compare(i + 1, i, 1.0, 1.0) == "values differ"


def test_entry_from_mlir(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(
        "module {\n  func.func private @helper(%a: i32) -> i32\n"
        "  func.func @test_add_bcast(%arg0: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32> {\n  }\n}\n"
    )
    assert baseline.entry_from_mlir(path) == "test_add_bcast"
    path.write_text('func.func @"odd name"(%a: i32) -> i32 {\n}\n')
    assert baseline.entry_from_mlir(path) == "odd name"


def _outcome(case_id, duration, **stages):
    return {"case_id": case_id, "status": "pass", "duration": duration, "stage_times": stages}


def test_overhead_stats_subtracts_iree_time():
    outcomes = [
        _outcome("a", 1.010, compile=0.9, load=0.05, run=0.05, inputs=0.004),
        _outcome("b", 0.030, store=0.001, load=0.01, run=0.01, compare=0.002),
        {"case_id": "c", "status": "skip", "duration": 0.0, "stage_times": {}},
    ]
    stats = outcome_stats.overhead_stats(outcomes)
    assert stats["count"] == 2
    assert stats["mean_ms"] == pytest.approx(10.0, abs=1e-6)
    assert stats["split_ms_mean"]["inputs"] == pytest.approx(2.0)
    assert stats["split_ms_mean"]["other (IPC, job, worker start)"] == pytest.approx(
        (6.0 + 7.0) / 2
    )
    assert outcome_stats.overhead_stats([]) == {"count": 0}


def test_shard_balance():
    durations = {f"llvm-cpu:c{i}": float(1 + i % 7) for i in range(60)}
    balance = outcome_stats.shard_balance(durations, counts=(2, 4))
    assert set(balance) == {2, 4}
    assert all(v["spread"] <= 0.10 for v in balance.values())


def test_read_proc_status():
    if not Path(f"/proc/{os.getpid()}/status").exists():
        pytest.skip("no /proc")
    status = machine.read_proc_status(os.getpid())
    assert status["VmRSS"] > 1 << 20 and status["VmHWM"] >= status["VmRSS"]
    assert machine.read_proc_status(2**22 + 12345) == {}


def test_cold_variant_changes_only_the_source(tmp_path):
    from iree_conformance.model.cases import NpzCase

    src = tmp_path / "a.mlir"
    src.write_text("func.func @main() {\n  return\n}\n")
    case = NpzCase(case_id="t/a", suite="stablehlo", kind="mlir", source_path=src)
    variant = sample.cold_variant(case, "x-1")
    assert (
        variant.source_bytes.startswith(src.read_bytes())
        and variant.source_bytes != src.read_bytes()
    )
    assert (variant.case_id, variant.source_path) == (case.case_id, case.source_path)


def test_report_prints_ratios_and_verdicts():
    figures = {
        "machine": {
            "nproc": 2,
            "cpu": "X",
            "ram_gib": 8,
            "platform": "p",
            "python": "3",
            "versions": {},
            "loadavg_start": [1.0],
        },
        "workers": 2,
        "sample": {"onnx": 1, "stablehlo": 1, "file": "f"},
        "rounds": [
            {
                "baseline": {
                    "cases": 2,
                    "passed": 2,
                    "wall_s": 10.0,
                    "cases_per_min": 12.0,
                    "cpu_s": 8.0,
                    "cpu_s_per_case": 4.0,
                    "loadavg_after": [],
                },
                "cold": {
                    "cases": 2,
                    "passed": 2,
                    "wall_s": 4.0,
                    "cases_per_min": 30.0,
                    "cpu_s": 3.0,
                    "cpu_s_per_case": 1.5,
                    "loadavg_after": [],
                },
            }
        ],
        "memory_jobs": 1000,
        "memory_cold_every": 10,
    }
    mb = 2**20
    samples = [
        {
            "job": j,
            "pid": 7,
            "rss": (200 + 60 * j // 1000) * mb,
            "hwm": (210 + 60 * j // 1000) * mb,
            "cold": False,
        }
        for j in range(1, 1001)
    ]
    figures["memory"] = {
        "recycling off": memory.summarize_memory(
            {
                "samples": samples,
                "statuses": {"pass": 1000},
                "pids": [7],
                "wall_s": 1.0,
                "max_jobs": None,
            }
        )
    }
    assert figures["memory"]["recycling off"]["rss_growth_mb"] == 54.0
    figures["ratios"] = ratios.median_ratios([ratios.round_ratios(figures["rounds"][0])])
    assert figures["ratios"] == {"cold_vs_baseline": 2.5, "cold_vs_baseline_cpu": 2.67}
    figures["ratios"]["warm_vs_cold"] = 10.0
    figures["verdicts"] = targets.judge(figures)
    text = report.format_report(figures)
    assert "MISSED cold >= 3x baseline, CPU seconds: 2.67x (cases/min 2.50x)" in text
    assert "MISSED warm >= 20x cold, cases/min: 10.00x" in text
    assert "MISSED worker RSS growth" in text
    assert "NOTE" not in text


def test_report_from_a_saved_json(tmp_path, capsys):
    rounds = [
        {
            "cold": {"cases_per_min": 30.0, "cpu_s": 3.0},
            "baseline": {"cases_per_min": 12.0, "cpu_s": 6.0},
        },
        {
            "cold": {"cases_per_min": 60.0, "cpu_s": 3.0},
            "baseline": {"cases_per_min": 12.0, "cpu_s": 6.3},
        },
    ]
    for r in rounds:
        r["ratios"] = ratios.round_ratios(r)
    assert [r["ratios"]["cold_vs_baseline"] for r in rounds] == [2.5, 5.0]
    assert ratios.unstable_ratios(rounds) == ["cold_vs_baseline 2.50-5.00"]
    figures = {
        "machine": {
            "nproc": 2,
            "cpu": "X",
            "ram_gib": 8,
            "platform": "p",
            "python": "3",
            "versions": {},
            "loadavg_start": [],
        },
        "workers": 2,
        "sample": {"onnx": 1, "stablehlo": 1, "file": "f"},
        "rounds": [],
        "ratios": ratios.median_ratios([r["ratios"] for r in rounds]),
        "shards": {2: {"max_s": 10.0, "min_s": 9.5, "spread": 0.05}},
    }
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(figures))
    assert suite_speed.main(["--report-from", str(path)]) == 0
    out = capsys.readouterr().out
    assert "MISSED cold >= 3x baseline, CPU seconds: 2.05x (cases/min 3.75x)" in out
    assert "MET    --shard I/2 within 10% on recorded durations: spread 5.0%" in out


def test_baseline_work_dirs_differ_when_case_is_folded(tmp_path):
    plans = baseline.plan_baseline(["onnx-ops/test_elu", "onnx-ops/test_ELU"], tmp_path)
    # ONNX operator tests keep f64, as in the suite (and IREE's own ONNX CI).
    assert all("--iree-input-demote-f64-to-f32=false" in p.compile_flags for p in plans)
    folded = {Path(p.work_dir).name.casefold() for p in plans}
    assert len(folded) == 2


def test_parse_proc_stat_cpu():
    # the command name may hold spaces and parentheses; utime, stime are fields 14, 15
    text = "1234 (python (x) y) S 1 2 3 4 5 6 7 8 9 10 250 50 11 12 20 0 1 0 100 200 300"
    assert machine.parse_proc_stat_cpu(text, 100.0) == pytest.approx(3.0)
    if Path(f"/proc/{os.getpid()}/stat").exists():
        assert machine.process_cpu(os.getpid()) > 0
    assert machine.process_cpu(None) is None and machine.process_cpu(2**22 + 12345) is None


def test_compare_verdicts():
    a = [
        {"case_id": "x", "status": "pass", "stage": "compare", "verdict": "pass"},
        {"case_id": "y", "status": "fail", "stage": "compare", "verdict": "xfail"},
        {"case_id": "z", "status": "pass"},
    ]
    b = [
        {"case_id": "x", "status": "pass", "stage": "compare", "verdict": "pass"},
        {"case_id": "y", "status": "error", "stage": "compile", "verdict": "fail"},
        {"case_id": "w", "status": "pass"},
    ]
    got = outcome_stats.compare_verdicts(a, b)
    assert got["compared"] == 2
    assert got["differ"] == {
        "y": {
            "status": ("fail", "error"),
            "stage": ("compare", "compile"),
            "verdict": ("xfail", "fail"),
        }
    }
    assert (got["only_in_a"], got["only_in_b"]) == (["z"], ["w"])
    assert outcome_stats.compare_verdicts(a, a)["differ"] == {}


def test_choose_batch_size():
    rows = {
        1: {"cpu_s_per_case": 1.00, "peak_rss_mb": 240},
        4: {"cpu_s_per_case": 0.60, "peak_rss_mb": 250},
        8: {"cpu_s_per_case": 0.52, "peak_rss_mb": 260},
        16: {"cpu_s_per_case": 0.50, "peak_rss_mb": 300},
        32: {"cpu_s_per_case": 0.49, "peak_rss_mb": 2000},
    }
    # 32 is over the memory limit; 16 is the best left, and 8 is within 5% of it
    assert batch_size.choose_batch_size(rows) == {
        "size": 8,
        "fastest": 16,
        "cpu_slack": 0.05,
        "rss_limit_mb": 1024.0,
    }
    assert batch_size.choose_batch_size(rows, cpu_slack=0.0)["size"] == 16
    assert batch_size.choose_batch_size(rows, rss_limit_mb=4096)["fastest"] == 32
    assert batch_size.choose_batch_size({1: {"cpu_s_per_case": None}}) == {}


def test_unbatched_and_thread_ratios():
    phases = {
        "baseline": {"cases_per_min": 10.0, "cpu_s": 300.0},
        "baseline-native": {"cases_per_min": 12.0, "cpu_s": 240.0},
        "cold": {"cases_per_min": 40.0, "cpu_s": 80.0},
        "cold-unbatched": {"cases_per_min": 20.0, "cpu_s": 160.0},
        "cold-nothreads": {"cases_per_min": 44.0, "cpu_s": 76.0},
    }
    r = ratios.round_ratios(phases)
    assert (r["cold_vs_baseline_cpu"], r["cold_vs_baseline_native_cpu"]) == (3.75, 3.0)
    assert (r["cold_unbatched_vs_baseline_cpu"], r["cold_unbatched_vs_baseline_native_cpu"]) == (
        1.88,
        1.5,
    )
    assert (r["cold_vs_cold_unbatched"], r["cold_vs_cold_unbatched_cpu"]) == (2.0, 2.0)
    assert (r["nothreads_vs_cold"], r["nothreads_vs_cold_cpu"]) == (1.1, 1.05)
    verdicts = targets.judge(
        {
            "ratios": r,
            "batched_vs_unbatched": outcome_stats.compare_verdicts(
                [{"case_id": "x", "status": "pass"}], [{"case_id": "x", "status": "pass"}]
            ),
        }
    )
    assert "MET    cold >= 3x baseline, CPU seconds: 3.75x (cases/min 4.00x)" in verdicts
    assert (
        "MET    cold >= 2.5x baseline with native binaries, CPU seconds: 3.00x (cases/min 3.33x)"
        in verdicts
    )
    assert (
        "MET    verdicts with batching identical to --batch-size 1 (status, stage, verdict): 1 cases compared, 0 differ"
        in verdicts
    )


def test_warm_overhead_target_is_5_ms():
    lines = targets.judge({"profile": {"parent": {"count": 3, "mean_ms": 5.5}}})
    assert lines == [
        "MISSED overhead < 5 ms/case, warm steady state (profiled pipeline): mean 5.50 ms"
    ]


def test_batching_sections_of_the_report():
    figures = {
        "batched_vs_unbatched": {
            "compared": 2,
            "differ": {"y": {"status": ("fail", "pass")}},
            "only_in_a": [],
            "only_in_b": [],
        },
        "bisection": {
            "size": 4,
            "group_cases": 5,
            "clean": {
                "cases": 4,
                "batch_compiles": 1,
                "placed": 4,
                "wall_s": 1.0,
                "worker_cpu_s": 0.9,
            },
            "one failing": {
                "cases": 5,
                "batch_compiles": 2,
                "placed": 4,
                "wall_s": 2.0,
                "worker_cpu_s": 1.8,
                "wall_vs_clean": 2.0,
                "cpu_vs_clean": 2.0,
            },
        },
        "batch_rss": {
            "cases": 8,
            "sizes": {
                1: {
                    "batches": 8,
                    "wall_s": 8.0,
                    "cpu_s": 7.0,
                    "cpu_s_per_case": 0.875,
                    "peak_rss_mb": 240.0,
                    "statuses": {"pass": 8},
                }
            },
            "choice": {"size": 1, "fastest": 1, "cpu_slack": 0.05, "rss_limit_mb": 1024.0},
        },
    }
    text = "\n".join(report.format_batching(figures))
    assert "y: status fail (batched) vs pass" in text
    assert (
        "one failing" in text and " 2 batch compile(s)" in text and "wall 2.00x, CPU 2.00x" in text
    )
    assert "choice: batch size 1" in text
    assert any(
        line.startswith("MISSED verdicts with batching identical")
        for line in targets.judge(figures)
    )


def test_threads_env_reaches_only_the_workers(tmp_path):
    env = threads.threads_env(tmp_path, ["--mlir-disable-threading"])
    site = Path(env["PYTHONPATH"].split(os.pathsep)[0])
    text = (site / "sitecustomize.py").read_text()
    compile(text, "sitecustomize.py", "exec")
    assert env["SUITE_SPEED_IREE_GLOBAL_FLAGS"] == "--mlir-disable-threading"
    assert threads.WORKER_LOG_PREFIX in text
    # the worker's log file is what marks a worker process (worker.py's tempfile prefix)
    from iree_conformance.engine.worker.parent import WorkerClient

    client = WorkerClient(None)
    try:
        assert os.path.basename(client.log_path).startswith(threads.WORKER_LOG_PREFIX)
    finally:
        client.close()


def test_failing_case_is_of_the_same_suite_and_kind(tmp_path):
    from iree_conformance.model.cases import NpzCase

    src = tmp_path / "a.mlir"
    src.write_text("func.func @main() {\n  return\n}\n")
    like = NpzCase(case_id="stablehlo/a", suite="stablehlo", kind="mlir", source_path=src)
    bad = bisection.failing_case(like, tmp_path)
    assert (bad.suite, bad.kind, type(bad)) == (like.suite, like.kind, type(like))
    assert (
        bad.case_id == "stablehlo/zz_suite_speed_failing"
        and "custom_call" in bad.source_path.read_text()
    )


def test_threads_sitecustomize_sets_the_flags_in_workers_only(tmp_path):
    pytest.importorskip("iree.compiler")
    env = threads.threads_env(tmp_path, ["--mlir-disable-threading"])
    marks = Path(env["SUITE_SPEED_IREE_GLOBAL_MARKS"])
    worker_like = str(tmp_path / f"{threads.WORKER_LOG_PREFIX}x.log")
    subprocess.run(
        [sys.executable, "-m", "this", "other.log"], env=env, check=True, capture_output=True
    )
    assert list(marks.iterdir()) == []  # not a worker: untouched
    subprocess.run(
        [sys.executable, "-m", "this", worker_like], env=env, check=True, capture_output=True
    )
    assert len(list(marks.iterdir())) == 1


def test_overhead_of_a_batched_case_subtracts_its_share_of_the_batch():
    batched = {
        "case_id": "a",
        "status": "pass",
        "duration": 0.710,  # its share of the batch's import and compile (0.7 s) included
        "info": {"batch": {"size": 4}},
        "stage_times": {
            "inputs": 0.001,
            "import": 0.2,
            "compile": 0.5,
            "load": 0.002,
            "run": 0.003,
        },
    }
    alone = {
        "case_id": "b",
        "status": "pass",
        "duration": 1.0,
        "info": {"batch": {"size": 4, "ran_alone": True}},
        "stage_times": {"import": 0.2, "compile": 0.7, "run": 0.05},
    }
    assert outcome_stats.iree_time(batched) == pytest.approx(0.705) and outcome_stats.iree_time(
        alone
    ) == pytest.approx(0.95)
    stats = outcome_stats.overhead_stats([batched])
    assert stats["mean_ms"] == pytest.approx(5.0) and "compile" not in stats["split_ms_mean"]
