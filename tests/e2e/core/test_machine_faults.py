"""A fault of the machine is never stored and never IREE's verdict (issue 55 item 6): a
full disk, a temporary folder that cannot be used, memory exhausted, a killed worker are
the harness's error with the machine's reason, and the next run tries again."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from iree_conformance.cli.check_model import exit_status
from iree_conformance.common.errors import EXIT_UNJUDGED
from iree_conformance.common.machine_faults import MACHINE
from iree_conformance.common.store import ArtifactStore
from iree_conformance.engine.attempt import Attempt
from iree_conformance.engine.pipeline import run_case
from iree_conformance.engine.verdicts import judge
from iree_conformance.engine.worker.errors import StageError
from iree_conformance.engine.worker.executor import Executor
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.expectations.lookup import Expectations, ManifestEntry
from iree_conformance.model.jobs import CaseJob, Program
from tests.e2e.core.test_worker import add_case
from tests.support.core_helpers import ADD_MLIR


def _failures(store) -> list:
    return [p for p in (store / "failure").rglob("*.bin")] if (store / "failure").exists() else []


def _run(tmp_path, case, target, fault=None):
    """One run of the case on a fresh worker over tmp_path/store, with a fault injected."""
    from iree_conformance.engine import pipeline

    real = pipeline.build_job
    if fault is not None:
        pipeline.build_job = lambda *a, **k: dataclasses.replace(real(*a, **k), fault=fault)
    worker = WorkerClient(tmp_path / "store", {"compile": 120.0})
    try:
        return run_case(Attempt(case, target), worker)[0]
    finally:
        worker.close()
        pipeline.build_job = real


def _is_the_machines(outcome, words: str) -> None:
    assert outcome.info.get("harness_error") == MACHINE, outcome.diagnostics
    first = outcome.diagnostics[0]
    assert first.startswith("the harness's error, not IREE's verdict: the machine"), first
    assert words in first
    # A manifest entry for the stage's kind never makes it an expected failure of IREE's.
    listed = ManifestEntry((outcome.failure_kind,), "a known bug", Path("m.toml"), 1)
    for xfail in ({}, {outcome.case_id: listed}):
        verdict = judge(Expectations(outcome.target, xfail=xfail), outcome)
        assert verdict.name == "fail" and "not IREE's verdict" in verdict.message
    assert exit_status(outcome) == EXIT_UNJUDGED  # check-model: not "IREE failed" (1)


def test_a_missing_temp_folder_is_not_stored_as_a_compiler_crash(tmp_path, llvm_cpu, monkeypatch):
    """Was: "crash" at compile (the compiler cannot make its temporary files), recorded in
    the store and replayed once TMPDIR was fixed. The worker now gives the compiler a
    scratch folder of its own (under the system's temporary folder when TMPDIR names no
    folder), so the run is IREE's verdict, and nothing is stored as a failure."""
    case = add_case(tmp_path, "tmpdir")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "no-such-folder"))
    missing = _run(tmp_path, case, llvm_cpu)
    assert (missing.status, missing.info["cache_hits"]["compile"]) == ("pass", False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmpdir.mlir"))  # a file, not a folder
    assert _run(tmp_path, case, llvm_cpu).status == "pass"
    assert _failures(tmp_path / "store") == []


def test_a_killed_worker_and_exhausted_memory_are_the_machines(tmp_path, llvm_cpu):
    case = add_case(tmp_path, "killed")
    _is_the_machines(_run(tmp_path, case, llvm_cpu, ("compiler", "kill")), "SIGKILL")
    _is_the_machines(_run(tmp_path, case, llvm_cpu, ("compiler", "memory")), "MemoryError")
    assert _failures(tmp_path / "store") == []
    assert _run(tmp_path, case, llvm_cpu).status == "pass"


def test_a_full_disk_during_import_is_not_stored(tmp_path, llvm_cpu):
    store = ArtifactStore(tmp_path / "store")
    executor = Executor(store, lambda: "")
    program = Program("t/add", "mlir", source_bytes=ADD_MLIR.encode())
    job = CaseJob(
        program, llvm_cpu.flags_for("mlir"), "llvm-cpu", llvm_cpu.driver, compile_only=True
    )

    def full(*args):
        raise StageError(
            "import",
            "iree-import-onnx --large-model --externalize-params failed (exit 1):\n"
            "OSError: [Errno 28] No space left on device",
        )

    real = executor._prepare_and_import
    executor._prepare_and_import = full
    result = executor.execute(job, lambda name: None)
    # Was: "error at import" stored, and replayed from the store after space was freed.
    assert result.info["harness_error"] == MACHINE and "no space left" in result.diagnostics[0]
    assert _failures(tmp_path / "store") == []
    executor._prepare_and_import = real
    again = executor.execute(job, lambda name: None)
    assert again.status == "pass" and again.vmfb, again.diagnostics
    assert again.info["cache_hits"] == {
        "import": False,
        "compile": False,
    }
