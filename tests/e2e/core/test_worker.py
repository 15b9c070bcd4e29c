"""The worker turns compiler crashes and hangs into Outcomes and carries on."""

import dataclasses
import sys

import numpy as np
import pytest

from iree_conformance.engine.attempt import Attempt, AttemptSettings
from iree_conformance.engine.pipeline import run_case
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.model.cases import Case, NpzCase
from tests.support.core_helpers import ADD_MLIR


@pytest.fixture
def worker(tmp_path):
    client = WorkerClient(tmp_path / "store", {"compile": 120.0})
    yield client
    client.close()


def add_case(tmp_path, name="add"):
    mlir = tmp_path / f"{name}.mlir"
    mlir.write_text(ADD_MLIR)
    data = tmp_path / f"{name}.npz"
    a = np.array([1, 2, 3, 4], np.float32)
    np.savez(data, input_0=a, input_1=a, expected_0=a + a)
    return NpzCase(
        case_id=f"t/{name}",
        suite="stablehlo",
        kind="mlir",
        source_path=mlir,
        input_type="stablehlo",
        data_path=data,
    )


def test_pass_then_warm_run_does_not_compile(tmp_path, worker, llvm_cpu):
    case = add_case(tmp_path)
    outcome, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert outcome.status == "pass", outcome.diagnostics
    assert "compile" in outcome.stage_times and outcome.info["cache_hits"] == {
        "import": False,
        "compile": False,
    }
    again, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert again.status == "pass"
    assert "compile" not in again.stage_times and again.info["cache_hits"] == {
        "import": True,
        "compile": True,
    }


def test_wrong_expected_value_is_a_numerics_failure(tmp_path, worker, llvm_cpu):
    case = add_case(tmp_path)
    a = np.array([1, 2, 3, 4], np.float32)
    np.savez(case.data_path, input_0=a, input_1=a, expected_0=a)
    outcome, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert (
        outcome.status == "fail"
        and outcome.stage == "compare"
        and outcome.failure_kind == "fail-numerics"
    )
    assert outcome.metrics["mismatch_count"] == 4


def test_crash_becomes_an_outcome_and_the_worker_is_replaced(
    tmp_path, worker, llvm_cpu, monkeypatch
):
    case = add_case(tmp_path, "crash")
    from iree_conformance.engine import pipeline

    real = pipeline.build_job
    monkeypatch.setattr(
        pipeline,
        "build_job",
        lambda *a, **k: dataclasses.replace(real(*a, **k), fault=("compile", "crash")),
    )
    outcome, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert outcome.status == "crash" and outcome.stage == "compile"
    assert "worker process died during compile" in outcome.diagnostics[0]
    # os.abort(): SIGABRT on POSIX, exit status 3 from the MSVC runtime on Windows.
    assert (
        "SIGABRT" if sys.platform != "win32" else "exit status 3 (abort())"
    ) in outcome.diagnostics[0]
    monkeypatch.setattr(pipeline, "build_job", real)
    after, _ = run_case(Attempt(add_case(tmp_path, "after"), llvm_cpu), worker)
    assert after.status == "pass"


def test_hang_becomes_a_timeout(tmp_path, worker, llvm_cpu, monkeypatch):
    worker.stage_timeouts["compile"] = 2.0
    case = add_case(tmp_path, "hang")
    from iree_conformance.engine import pipeline

    real = pipeline.build_job
    monkeypatch.setattr(
        pipeline,
        "build_job",
        lambda *a, **k: dataclasses.replace(real(*a, **k), fault=("compile", "hang")),
    )
    outcome, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert (
        outcome.status == "timeout"
        and outcome.stage == "compile"
        and outcome.failure_kind == "timeout"
    )
    monkeypatch.setattr(pipeline, "build_job", real)
    worker.stage_timeouts["compile"] = 120.0
    assert run_case(Attempt(add_case(tmp_path, "after2"), llvm_cpu), worker)[0].status == "pass"


def test_malformed_mlir_is_an_import_error_with_the_parser_message(tmp_path, worker, llvm_cpu):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%a: tensor<4xf32> {\n")
    case = Case(
        case_id="t/bad", suite="stablehlo", kind="mlir", source_path=bad, input_type="stablehlo"
    )
    outcome, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert outcome.status == "error" and outcome.stage == "import"
    assert any("error" in line for line in outcome.diagnostics)
    assert not any("iree-compile" in line for line in outcome.diagnostics)


def test_missing_source_file_is_a_prepare_error(tmp_path, worker, llvm_cpu):
    case = Case(
        case_id="t/missing", suite="stablehlo", kind="mlir", source_path=tmp_path / "nope.mlir"
    )
    outcome, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert outcome.status == "error" and outcome.stage == "prepare"
    assert "nope.mlir" in outcome.diagnostics[0]


def test_compile_failure_is_cached_and_reported_again(tmp_path, worker, llvm_cpu):
    bad = tmp_path / "unsupported.mlir"
    bad.write_text(
        "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.custom_call @no_such_target(%a) : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
    )
    case = Case(
        case_id="t/u", suite="stablehlo", kind="mlir", source_path=bad, input_type="stablehlo"
    )
    first, _ = run_case(Attempt(case, llvm_cpu), worker)
    second, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert first.status == second.status == "error"
    assert first.diagnostics == second.diagnostics
    assert "store" in second.stage_times and "compile" not in second.stage_times
    assert first.info["cache_hits"] == {"import": False, "compile": False}
    assert second.info["cache_hits"] == {"import": True, "compile": True}  # read, not compiled


@pytest.mark.parametrize(
    "name, expected",
    [
        ("seed_cos_sin", [1.3817732, -1.2576177, -0.1485215, -1.4951145]),
        ("seed_softmax_4", [0.2540843, 0.6906727, 0.0343866, 0.0208565]),
    ],
)
def test_seed_programs_give_the_seed_documents_numbers(name, expected, worker, llvm_cpu):
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import build_job
    from tests.support.core_helpers import ROOT

    cases = ROOT / "conformance" / "stablehlo" / "cases"
    case = NpzCase(
        case_id=name,
        suite="stablehlo",
        kind="mlir",
        source_path=cases / f"{name}.mlir",
        input_type="stablehlo",
        data_path=cases / f"{name}.npz",
    )
    result = worker.execute(build_job(Attempt(case, llvm_cpu), case.input_sets()))
    assert result.status == "pass", result
    np.testing.assert_allclose(result.outputs[0][0], expected, rtol=0, atol=2e-7)


def test_timing_runs_record_a_median(tmp_path, worker, llvm_cpu):
    outcome, _ = run_case(
        Attempt(add_case(tmp_path, "timed"), llvm_cpu, AttemptSettings(timing_runs=3)), worker
    )
    assert outcome.status == "pass"
    timing = outcome.metrics["timing"]
    assert timing["runs"] == 3 and timing["iree_median_s"] > 0


def _faulty(monkeypatch, fault):
    from iree_conformance.engine import pipeline

    real = pipeline.build_job
    monkeypatch.setattr(
        pipeline,
        "build_job",
        lambda *a, **k: dataclasses.replace(real(*a, **k), fault=fault),
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CPU seconds from /proc")
def test_a_stage_limit_counts_cpu_seconds_and_a_hang_times_out_at_the_hang_bound(
    tmp_path, worker, llvm_cpu, monkeypatch
):
    """A stage starved of CPU by a loaded machine is not a timeout; a hang (no CPU) is,
    after HANG_FACTOR times its limit; a busy loop is, after its limit in CPU seconds."""
    import time

    from iree_conformance.engine.worker import parent as worker_module

    worker.stage_timeouts["compile"] = 1.0
    _faulty(monkeypatch, ("compile", "hang"))
    start = time.monotonic()
    outcome, _ = run_case(Attempt(add_case(tmp_path, "hang"), llvm_cpu), worker)
    assert (outcome.status, outcome.stage) == ("timeout", "compile")
    assert time.monotonic() - start >= worker_module.HANG_FACTOR * 1.0
    _faulty(monkeypatch, ("compile", "spin"))
    outcome, _ = run_case(Attempt(add_case(tmp_path, "spin"), llvm_cpu), worker)
    assert (outcome.status, outcome.stage) == ("timeout", "compile")
    worker.stage_timeouts["compile"] = 120.0


def test_starved_for_waits_while_cpu_is_under_the_limit(worker, monkeypatch):
    import time

    cpu = [10.5]
    monkeypatch.setattr(worker, "_cpu", lambda: cpu[0])
    now = time.monotonic()
    # 0.5 CPU s of a 2 s limit after 2 s wall: wait up to 1.5 s more.
    assert worker._starved_for(2.0, now - 2.0, 10.0) == pytest.approx(1.5, abs=0.05)
    cpu[0] = 12.5
    assert worker._starved_for(2.0, now - 2.0, 10.0) == 0.0  # 2.5 CPU s: past it
    cpu[0] = 10.0
    assert worker._starved_for(2.0, now - 8.5, 10.0) == 0.0  # no CPU, past the hang bound
    assert worker._starved_for(2.0, now - 2.0, None) == 0.0  # CPU unknown: wall seconds


def _with_fault(monkeypatch, fault):
    from iree_conformance.engine import pipeline

    real = pipeline.build_job
    monkeypatch.setattr(
        pipeline,
        "build_job",
        lambda *a, **k: dataclasses.replace(real(*a, **k), fault=fault),
    )
    return lambda: monkeypatch.setattr(pipeline, "build_job", real)


def test_a_compiler_crash_is_read_from_the_store_next_time(tmp_path, llvm_cpu, monkeypatch):
    """A compile that kills the worker is recorded under its compile key: a warm run
    answers crash at compile from the store and no worker dies; a retry (bypassing the
    store) compiles afresh."""
    case = add_case(tmp_path, "compiler_bug")
    restore = _with_fault(monkeypatch, ("compiler", "crash"))
    first = WorkerClient(tmp_path / "store", {"compile": 120.0})
    try:
        crashed, _ = run_case(Attempt(case, llvm_cpu), first)
    finally:
        first.close()
    assert (crashed.status, crashed.stage) == ("crash", "compile"), crashed.diagnostics
    restore()  # the same program again: the store answers, the fault never gets a chance
    second = WorkerClient(tmp_path / "store", {"compile": 120.0})
    try:
        warm, _ = run_case(Attempt(case, llvm_cpu), second)
        alive = second._proc is not None and second._proc.poll() is None
        fresh, _ = run_case(Attempt(case, llvm_cpu, retry=True), second)
    finally:
        second.close()
    assert (warm.status, warm.stage) == ("crash", "compile")
    assert warm.diagnostics == crashed.diagnostics
    assert warm.info["cache_hits"] == {"import": True, "compile": True}
    assert "compile" not in warm.stage_times
    assert alive  # no worker died for the warm answer
    assert fresh.status == "pass", fresh.diagnostics


def test_a_crash_outside_the_compiler_is_not_recorded(tmp_path, worker, llvm_cpu, monkeypatch):
    """The fault fires at the stage boundary, before any compile key is announced (as a
    kill from outside would be): nothing is recorded and the next run compiles."""
    case = add_case(tmp_path, "outside")
    restore = _with_fault(monkeypatch, ("compile", "crash"))
    crashed, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert crashed.status == "crash"
    restore()
    again, _ = run_case(Attempt(case, llvm_cpu), worker)
    assert again.status == "pass" and again.info["cache_hits"]["compile"] is False


def test_a_killed_worker_leaves_nothing_in_the_temp_folder(tmp_path, llvm_cpu, monkeypatch):
    """A worker killed mid-job (a timeout, a crash) used to leave its
    ``iree-conformance-stats-*`` folder behind, one per killed worker."""
    import tempfile

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    client = WorkerClient(tmp_path / "store", {"compile": 120.0})
    try:
        first, _ = run_case(Attempt(add_case(tmp_path, "first"), llvm_cpu), client)
        assert first.status == "pass", first.diagnostics  # the worker's statistics folder exists
        _faulty(monkeypatch, ("load", "crash"))
        killed, _ = run_case(Attempt(add_case(tmp_path, "killed"), llvm_cpu), client)
        assert killed.status == "crash"
        assert not [p for p in tmp.rglob("*") if "stats" in p.name]
    finally:
        client.close()
    assert list(tmp.iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="shared flock is POSIX-only")
def test_the_workers_compile_waits_for_the_machines_quiet_lock(
    tmp_path, llvm_cpu, monkeypatch, capfd
):
    """The worker's TMPDIR is its scratch folder: its quiet lock must still be the
    machine's (the parent's), told and not counted in the compile's time."""
    import os
    import subprocess
    import tempfile
    import time

    from iree_conformance.common import quiet_lock

    monkeypatch.delenv(quiet_lock.LOCK_ENV, raising=False)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    lock = quiet_lock.lock_path()
    assert lock is not None and lock.parent.name == f"iree-conformance-{os.getuid()}"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time, sys; from iree_conformance.common import "
         "quiet_lock as q\nwith q.holding(True): print('held', flush=True); time.sleep(2.5)"],
        env={**os.environ, quiet_lock.LOCK_ENV: str(lock)},
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    client = WorkerClient(tmp_path / "store", {"compile": 120.0})
    try:
        start = time.monotonic()
        outcome, _ = run_case(Attempt(add_case(tmp_path, "locked"), llvm_cpu), client)
        took = time.monotonic() - start
    finally:
        client.close()
        holder.wait(timeout=30)
    assert outcome.status == "pass", outcome.diagnostics
    assert took >= 1.5 and outcome.stage_times["compile"] < took - 1.0
    assert "waiting up to 30 s for the quiet lock" in capfd.readouterr().err
