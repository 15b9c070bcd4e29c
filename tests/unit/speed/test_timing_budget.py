"""The cost bound of --benchmark (docs/speed.md, "Cost"): the budget option, the plan that
keeps a warm case's figures within half its untimed run, and the store's set-up records
that tell a warm case whether its reference fits before it pays for it."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from iree_conformance.common import stats, timing
from iree_conformance.common.platform_info import cpu_fingerprint
from iree_conformance.common.store import ArtifactStore, make_key
from iree_conformance.engine.worker import timed
from iree_conformance.engine.worker.store import ModuleCache
from iree_conformance.frontends import registry
from iree_conformance.frontends.base import TimingReference
from iree_conformance.model.jobs import CaseJob, Program


@pytest.mark.parametrize(
    ("text", "value"), [("full", None), ("FULL", None), ("0.5", 0.5), ("2", 2.0)]
)
def test_the_budget_option_takes_a_fraction_or_full(text, value):
    assert timing.parse_timing_budget(text) == value


@pytest.mark.parametrize("text", ["0", "-1", "half", "inf", "nan", ""])
def test_a_bad_budget_names_what_it_takes(text):
    with pytest.raises(argparse.ArgumentTypeError, match="fraction .* or 'full'"):
        timing.parse_timing_budget(text)


class _Clock:
    """A clock that moves only when a fake call runs."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def call(self, seconds: float):
        def run() -> None:
            self.now += seconds

        return run


def test_sampling_stops_before_a_round_that_would_pass_the_limit(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(stats, "CLOCK", clock)
    sampling = stats.Sampling(warmup_runs=0, min_runs=100, min_time_s=0.0, max_time_s=1.0)
    taken = stats.sample_interleaved(
        {"a": clock.call(0.2), "b": clock.call(0.1)}, sampling, warm=frozenset({"a", "b"})
    )
    # Rounds of 0.3 s: the fourth would end at 1.2 s, past the limit, so it is not begun.
    assert len(taken["a"].values_s) == 3 and clock.now == pytest.approx(0.9)


class _Executor:
    def __init__(self, seconds: float = 0.0) -> None:
        self.calls = 0
        self.seconds = seconds

    def run(self, vm_module, context, entry, inputs):
        self.calls += 1
        time.sleep(self.seconds)
        return []


_CONTEXT = SimpleNamespace(config=SimpleNamespace(device=None))


def _reference(calls: list[int]) -> TimingReference:
    return TimingReference("fake", {"version": "1"}, lambda: calls.append(1))


def test_when_no_round_fits_the_checked_run_is_iree_s_one_sample():
    executor, calls = _Executor(), []
    figures = timing.time_iree_call(
        executor, None, _CONTEXT, "main", [], 5, _reference(calls), budget_s=0.05,
        checked_s=0.2, reference_call_s=0.001,
    )  # fmt: skip
    assert executor.calls == 0, "IREE was called again, past the budget"
    assert figures["iree_samples_s"] == [0.2] and figures["iree_from_checked_run"]
    assert calls and figures["reference"]["interleaved"] is False
    assert figures["reference"]["samples_s"]  # sampled alone, in what was left
    assert figures["cost_s"] < 0.05 + 0.02


def test_a_reference_call_that_does_not_fit_is_said():
    calls: list[int] = []
    figures = timing.time_iree_call(
        _Executor(), None, _CONTEXT, "main", [], 5, _reference(calls), budget_s=0.05,
        checked_s=0.2, reference_call_s=0.5,
    )  # fmt: skip
    assert not calls and "reference" not in figures
    assert "did not fit this case's timing budget" in figures["reference_missing"]
    assert figures["iree_samples_s"] == [0.2]


def test_a_call_that_needs_a_warm_up_that_does_not_fit_is_not_timed():
    executor = _Executor()
    figures = timing.time_iree_call(
        executor, None, _CONTEXT, "main", [], 5, None, budget_s=0.05, iree_warm=False,
        checked_s=0.2,
    )  # fmt: skip
    assert executor.calls == 0 and "do not fit this case's timing budget" in figures["skipped"]


def test_a_round_that_fits_is_sampled_interleaved():
    executor, calls = _Executor(), []
    figures = timing.time_iree_call(
        executor, None, _CONTEXT, "main", [], 5, _reference(calls), budget_s=0.5,
        checked_s=0.001, reference_call_s=0.001,
    )  # fmt: skip
    assert executor.calls >= 5 and "iree_from_checked_run" not in figures
    assert figures["reference"]["interleaved"] is True


def test_the_store_keeps_set_up_records_once_and_reads_damage_as_none(tmp_path: Path):
    cache = ModuleCache(ArtifactStore(tmp_path))
    assert cache.setup_s("reference:m.onnx") is None
    cache.put_setup_s("reference:m.onnx", 0.25)
    assert cache.setup_s("reference:m.onnx") == 0.25
    assert cache.setup_s("reference:other.onnx") is None
    key = make_key("setup", "reference:m.onnx", cpu_fingerprint())
    cache.put("timing", key, b"", {"seconds": "soon"})
    assert cache.setup_s("reference:m.onnx") is None
    entry = next(p for p in (tmp_path / "timing").rglob("*.bin"))
    entry.write_bytes(entry.read_bytes()[:-3])  # truncated: damage, dropped
    assert cache.setup_s("reference:m.onnx") is None


def _job(budget: float | None = 0.5) -> CaseJob:
    program = Program(case_id="c", kind="onnx", source_path="m.onnx")
    return CaseJob(
        program=program, compile_flags=(), target="llvm-cpu", driver="local-task",
        timing_runs=5, timing_budget=budget, timed_reference="m.onnx",
    )  # fmt: skip


@pytest.fixture
def set_ups(monkeypatch) -> list[str]:
    """The references the worker set up (the frontend is faked)."""
    made: list[str] = []

    def fake(program, reference, inputs):
        made.append(reference)
        return TimingReference("fake", {}, lambda: None), None

    monkeypatch.setattr(registry, "timing_reference", fake)
    monkeypatch.setattr(registry, "timing_modules", lambda program: ())
    return made


def test_a_warm_case_skips_a_reference_whose_set_up_is_over_its_budget(tmp_path, set_ups):
    cache = ModuleCache(ArtifactStore(tmp_path))
    cache.put_setup_s(f"reference:{timed.setup_identity(_job())}", 2.0)
    reference, missing, _, first = timed._reference(cache, _job(), [], 0.1)
    assert reference is None and not set_ups and not first
    assert "set-up takes about 2 s" in missing and "budget of 0.1 s" in missing
    # Twice the record must fit: set-up times vary by 2x on a shared machine.
    assert timed._reference(cache, _job(), [], 3.0)[0] is None
    # Within the budget, or with --timing-budget full, it is set up.
    assert timed._reference(cache, _job(), [], 4.5)[0] is not None
    assert timed._reference(cache, _job(None), [], None)[0] is not None
    assert set_ups == ["m.onnx", "m.onnx"]


def test_a_budget_never_pays_a_set_up_not_timed_before(tmp_path, set_ups):
    """The default timing adds at most its budget: a set-up never timed on this machine
    cannot be known to fit, so a budgeted run leaves it out and records nothing."""
    cache = ModuleCache(ArtifactStore(tmp_path))
    reference, missing, _, first = timed._reference(cache, _job(), [], 100.0)
    assert reference is None and not first and not set_ups
    assert "has not been timed on this machine" in missing and "--timing-budget full" in missing
    assert cache.setup_s(f"reference:{timed.setup_identity(_job())}") is None


def test_a_first_set_up_is_recorded_and_a_pending_import_counts(tmp_path, set_ups, monkeypatch):
    cache = ModuleCache(ArtifactStore(tmp_path))
    reference, missing, _, first = timed._reference(cache, _job(None), [], None)
    assert reference is not None and first and missing is None
    recorded = cache.setup_s(f"reference:{timed.setup_identity(_job())}")
    assert recorded is not None and recorded < 0.1
    # Once recorded, a budgeted run sets it up when twice the record fits.
    assert timed._reference(cache, _job(), [], 0.5)[0] is not None
    # A library this worker has not imported yet: its recorded import counts.
    monkeypatch.setattr(registry, "timing_modules", lambda program: ("not_imported_lib",))
    assert "not_imported_lib" not in sys.modules
    cache.put_setup_s("import:not_imported_lib", 5.0)
    reference, missing, _, _ = timed._reference(cache, _job(), [], 1.0)
    assert reference is None and "set-up takes about 5" in missing
    monkeypatch.setattr(registry, "timing_modules", lambda program: ("sys",))  # imported
    assert timed._reference(cache, _job(), [], 1.0)[0] is not None


def test_a_set_up_record_outlives_the_checkout_folder(tmp_path):
    """The same model in two checkouts (a CI runner's work folder) shares its record; a
    changed model (another size) does not."""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.onnx").write_bytes(b"12345")
    a, b = (dataclasses.replace(_job(), timed_reference=str(tmp_path / f / "m.onnx")) for f in "ab")
    assert timed.setup_identity(a) == timed.setup_identity(b)
    (tmp_path / "b" / "m.onnx").write_bytes(b"123456")
    assert timed.setup_identity(a) != timed.setup_identity(b)


def test_the_job_carries_the_budget_from_the_attempt():
    from iree_conformance.engine import pipeline
    from iree_conformance.engine.attempt import Attempt, AttemptSettings
    from iree_conformance.engine.batching import Placement
    from iree_conformance.model.cases import Case
    from iree_conformance.model.targets import Target

    case = Case(case_id="c", suite="s", kind="mlir", source_bytes=b"")
    target = Target(name="llvm-cpu", compile_flags=(), driver="local-task")
    settings = AttemptSettings(timing_runs=3, timing_budget=None)
    job = pipeline.build_job(Attempt(case, target, settings), [[]])
    assert job.timing_budget is None and job.untimed_before_s == 0.0
    assert dataclasses.replace(job, timing_budget=0.5).timing_budget == 0.5
    # A batch member's untimed run includes its share of the batch's compile.
    placement = Placement("key", 4, {}, {"import": 0.5, "compile": 1.5})
    attempt = Attempt(case, target, AttemptSettings(timing_runs=3), placement=placement)
    job = pipeline.build_job(attempt, [[]])
    assert job.untimed_before_s == 2.0 and job.timing_budget == timing.DEFAULT_TIMING_BUDGET
    assert timing.timing_budget_s({"load": 0.5, "run": 0.5}, 0.5, 2.0) == 1.5


# -- explicit figures are taken in full; memory that measures the case (issue 45) ---------


@pytest.mark.parametrize(
    "timing_runs, flag, budget, expected",
    [
        (0, None, 0.5, 0.5),  # a model timed by default: the bound holds
        (0, True, 0.5, None),  # --benchmark: every figure
        (5, None, 0.5, None),  # --timing-runs N: every figure
        (0, None, None, None),  # --timing-budget full
        (0, False, 0.5, 0.5),
    ],
)
def test_the_budget_bounds_only_the_timing_nobody_asked_for(timing_runs, flag, budget, expected):
    from iree_conformance.engine.benchmark import timing_budget_for

    assert timing_budget_for(timing_runs, flag, budget) == expected


def test_check_model_benchmark_given_takes_every_figure():
    import argparse

    from iree_conformance.cli import check_model

    def args(**kw):
        base = {"benchmark": None, "timing_runs": None, "timing_budget": 0.5}
        return argparse.Namespace(**{**base, **kw})

    assert check_model._timing_budget(args()) == 0.5  # the default: on, within the budget
    assert check_model._timing_budget(args(benchmark=True)) is None
    assert check_model._timing_budget(args(timing_runs=30)) is None
    assert (
        check_model._timing_runs(args()) == 20
        and check_model._timing_runs(args(benchmark=False)) == 0
    )


class _Allocator:
    def __init__(self) -> None:
        self.statistics = {"device_bytes_allocated": 5000, "host_bytes_allocated": 0,
                           "device_bytes_peak": 9000}  # fmt: skip


class _CountingExecutor(_Executor):
    """Each call allocates 64 device bytes through the allocator."""

    def __init__(self, allocator: _Allocator) -> None:
        super().__init__()
        self.allocator = allocator

    def run(self, vm_module, context, entry, inputs):
        self.allocator.statistics["device_bytes_allocated"] += 64
        return super().run(vm_module, context, entry, inputs)


def test_memory_figures_are_deltas_over_the_calls_not_the_workers_history(monkeypatch):
    """Whatever the worker held before (a compile's 340 MiB, 5000 bytes of earlier cases'
    allocations), the figures are the growth over the calls and IREE's bytes for one run."""
    allocator = _Allocator()
    device = SimpleNamespace(allocator=allocator)
    context = SimpleNamespace(config=SimpleNamespace(device=device))
    rss = {"VmRSS": 340 << 20, "VmHWM": 340 << 20}
    monkeypatch.setattr(timing, "reset_peak_rss", lambda: True)
    monkeypatch.setattr(timing, "_status_bytes", lambda field: rss[field])
    executor = _CountingExecutor(allocator)
    real_run = executor.run

    def run_and_grow(*a):
        rss["VmHWM"] = (340 << 20) + (3 << 20)  # the calls touch 3 MiB
        return real_run(*a)

    executor.run = run_and_grow  # type: ignore[method-assign]
    figures = timing.time_iree_call(executor, None, context, "main", [], 5, None, budget_s=0.3)
    memory = figures["memory"]
    assert memory["calls"] == executor.calls >= 5
    assert memory["rss_growth_bytes"] == 3 << 20
    assert "VmHWM over IREE's timed calls minus VmRSS just before" in memory["rss_growth_how"]
    assert memory["allocated_bytes"] == {"device": 64, "host": 0}
    assert (
        memory["run_peak_rss_bytes"] == (343 << 20) and "not compared" in memory["run_peak_rss_how"]
    )


def test_memory_growth_is_not_measured_where_the_mark_cannot_be_reset(monkeypatch):
    monkeypatch.setattr(timing, "reset_peak_rss", lambda: False)
    figures = timing.time_iree_call(_Executor(), None, _CONTEXT, "main", [], 3, None, budget_s=0.2)
    memory = figures["memory"]
    assert memory["rss_growth_bytes"] is None and "cannot be reset" in memory["rss_growth_how"]
    assert memory["allocated_bytes"] is None  # no allocator statistics on this device


def test_a_tight_budget_measures_no_memory_for_calls_it_did_not_time():
    figures = timing.time_iree_call(
        _Executor(), None, _CONTEXT, "main", [], 5, None, budget_s=0.05, checked_s=0.2,
    )  # fmt: skip
    memory = figures["memory"]
    assert memory["rss_growth_bytes"] is None and memory["allocated_bytes"] is None
    assert "no IREE call was timed" in memory["rss_growth_how"]
