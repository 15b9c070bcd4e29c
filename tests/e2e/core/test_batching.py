"""Batched compilation: planning, merging, bisection and the solo rerun."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from iree_conformance.engine.attempt import Attempt, AttemptSettings
from iree_conformance.engine.batching import Batch, BatchCoordinator, plan_batches
from iree_conformance.engine.module_merge import (
    MergeMember,
    culprits_of,
    member_source_name,
    merge_modules,
)
from iree_conformance.engine.pipeline import run_case
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.model.cases import Case, NpzCase
from iree_conformance.model.jobs import BatchJob, CaseJob
from iree_conformance.suites.stablehlo_files import CheckCase
from tests.support.core_helpers import TARGETS_TOML


def _program(value: float, extra: str = "") -> str:
    """main(x) = helper(x) + value: a public function, a private helper and a global."""
    return f"""module attributes {{mhlo.num_partitions = 1 : i32}} {{
  util.global private @offset = dense<{value}> : tensor<4xf32>
  func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {{
    %c = util.global.load @offset : tensor<4xf32>
    %0 = stablehlo.add %x, %c : tensor<4xf32>
    return %0 : tensor<4xf32>
  }}
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
    %0 = call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
    {extra}
    return %0 : tensor<4xf32>
  }}
}}
"""


_BROKEN = """module attributes {mhlo.num_partitions = 1 : i32} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.custom_call"(%x) {call_target_name = "no_such_target"} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


class _AddCase(Case):
    """main(x) = x + value on x = [0, 1, 2, 3]."""

    batchable = True

    def __init__(self, case_id: str, value: float, text: str | None = None):
        super().__init__(
            case_id=case_id,
            suite="test",
            kind="mlir",
            source_bytes=(text or _program(value)).encode(),
        )
        self.value = value

    def input_sets(self):
        return [[np.arange(4, dtype=np.float32)]]

    def expected_sets(self, input_sets):
        return [[np.arange(4, dtype=np.float32) + np.float32(self.value)]]


@pytest.fixture(scope="module")
def targets():
    from iree_conformance.model.targets import load_targets

    return load_targets(TARGETS_TOML)


# -- planning -------------------------------------------------------------------------
def _cases(count: int, suite: str = "s") -> list[Case]:
    return [
        NpzCase(case_id=f"{suite}/case_{i:03d}", suite=suite, kind="mlir") for i in range(count)
    ]


def test_plan_is_deterministic_bounded_and_per_group(targets):
    llvm, vmvx = targets["llvm-cpu"], targets["vmvx"]
    pairs = (
        [(c, llvm) for c in _cases(50)]
        + [(c, vmvx) for c in _cases(50)]
        + [(c, llvm) for c in _cases(7, "t")]
    )
    plan = plan_batches(pairs, 8)
    shuffled = list(pairs)
    random.Random(3).shuffle(shuffled)
    assert plan == plan_batches(shuffled, 8)
    batches = set(plan.values())
    assert all(2 <= len(b.cases) <= 8 for b in batches)
    for batch in batches:  # one suite, one target in each batch
        assert len({c.suite for c in batch.cases}) == 1
        assert all(plan[(batch.target, c.case_id)] == batch for c in batch.cases)
    assert {b.target for b in batches} == {"llvm-cpu", "vmvx"}
    # Sorted ids within a group: a batch is a run of consecutive ids.
    for batch in batches:
        assert list(batch.case_ids) == sorted(batch.case_ids)


def test_plan_leaves_out_what_must_run_alone(targets):
    llvm = targets["llvm-cpu"]
    skipped = NpzCase(case_id="s/skipped", suite="s", kind="mlir", skip_reason="not here")
    model = Case(case_id="s/model", suite="s", kind="onnx")  # Case.batchable is False
    plan = plan_batches([(c, llvm) for c in [*_cases(5), skipped, model]], 16)
    assert ("llvm-cpu", "s/skipped") not in plan and ("llvm-cpu", "s/model") not in plan
    assert plan_batches([(c, llvm) for c in _cases(5)], 1) == {}


def test_removing_a_case_moves_only_its_own_batch(targets):
    llvm = targets["llvm-cpu"]
    cases = _cases(200)
    before = {b.case_ids for b in plan_batches([(c, llvm) for c in cases], 8).values()}
    removed = cases[100]
    after = {
        b.case_ids for b in plan_batches([(c, llvm) for c in cases if c is not removed], 8).values()
    }
    changed = before - after
    assert changed and all(
        removed.case_id in ids or len(ids) < 8 or ids[-1] >= removed.case_id for ids in changed
    )
    # Content-defined boundaries: most batches survive (index chunking would shift all after it).
    assert len(before & after) >= len(before) - 3


# -- merging ---------------------------------------------------------------------------
def test_merge_renames_every_symbol_and_keeps_each_member_apart():
    from iree.compiler.api import Session

    members = [MergeMember(f"c{i}", _program(float(i)).encode(), {}) for i in range(3)]
    merged, placed, left_out = merge_modules(members, Session().context)
    assert left_out == {} and list(placed) == ["c0", "c1", "c2"]
    assert [placed[c].renamed("main") for c in placed] == ["b0_main", "b1_main", "b2_main"]
    import iree.compiler.ir as ir

    text = str(ir.Module.parse(merged, context=Session().context))
    for i in range(3):
        assert f"@b{i}_helper" in text and f"@b{i}_offset" in text and f"@b{i}_main" in text


def test_merge_leaves_out_a_member_with_other_module_attributes():
    from iree.compiler.api import Session

    other = _program(1.0).replace("mhlo.num_partitions = 1", "mhlo.num_partitions = 2")
    members = [
        MergeMember("a", _program(0.0).encode(), {}),
        MergeMember("b", other.encode(), {}),
        MergeMember("c", b"not mlir", {}),
    ]
    _, placed, left_out = merge_modules(members, Session().context)
    assert list(placed) == ["a"]
    assert "attributes differ" in left_out["b"] and "cannot be parsed" in left_out["c"]


def test_culprits_are_read_from_the_members_source_names():
    text = f"{member_source_name(3)}:4:10: error: failed to legalize\n{member_source_name(5)}:2:1: note: called from\n"
    assert culprits_of(text) == {3}


# -- the coordinator and the pipeline, with a real worker -------------------------------
def test_a_batch_compiles_once_and_each_case_runs_its_own_function(worker, targets):
    llvm = targets["llvm-cpu"]
    cases = [_AddCase(f"t/add_{i}", float(i)) for i in range(4)]
    batch = Batch("test-batch", "llvm-cpu", tuple(cases))
    coordinator = BatchCoordinator()
    for case in cases:
        placement = coordinator.placement(batch, case, llvm, worker)
        assert placement is not None and placement.batch_size == 4
        outcome, _ = run_case(Attempt(case, llvm, placement=placement), worker)
        assert (outcome.status, outcome.info["batch"]) == ("pass", {"size": 4}), outcome.diagnostics
    assert coordinator.compiles == 1


def test_a_compile_error_is_named_by_the_compiler_and_runs_alone(worker, targets):
    llvm = targets["llvm-cpu"]
    # Values of their own: the module's store holds the other tests' programs, and a
    # program that another batch compiled runs there (the member index), not in this one.
    cases = [_AddCase(f"u/add_{i}", float(i) + 100) for i in range(5)]
    broken = _AddCase("u/add_2", 2.0, _BROKEN)
    cases[2] = broken
    batch = Batch("test-batch", "llvm-cpu", tuple(cases))
    coordinator = BatchCoordinator()
    placements = {c.case_id: coordinator.placement(batch, c, llvm, worker) for c in cases}
    assert placements["u/add_2"] is None
    assert all(placements[c.case_id] is not None for c in cases if c is not broken)
    assert coordinator.compiles == 2  # the failed batch, then the others without a bisection
    alone, _ = run_case(Attempt(broken, llvm), worker)
    assert (alone.status, alone.stage) == ("error", "compile")


class _CrashingWorker:
    """A WorkerClient whose batch compiles crash while they hold one chosen case."""

    def __init__(self, real: WorkerClient, crash_with: str):
        self.real, self.crash_with, self.batch_jobs = real, crash_with, 0

    def execute(self, job):
        if isinstance(job, BatchJob):
            self.batch_jobs += 1
            if any(m.case_id == self.crash_with for m in job.members):
                job = dataclasses.replace(job, fault=("compile", "crash"))
        return self.real.execute(job)


def test_a_crashing_batch_is_bisected_until_the_crash_stands_alone(worker, targets):
    llvm = targets["llvm-cpu"]
    cases = [_AddCase(f"v/add_{i}", float(i)) for i in range(8)]
    batch = Batch("test-batch", "llvm-cpu", tuple(cases))
    crashing = _CrashingWorker(worker, "v/add_5")
    coordinator = BatchCoordinator()
    placements = {c.case_id: coordinator.placement(batch, c, llvm, crashing) for c in cases}
    assert placements["v/add_5"] is None
    # 8 crashes -> 0-3 compile, 4-7 crash -> 4-5 crash, 6-7 compile -> 4 and 5 alone (a
    # half of one runs solo, as without batching).
    assert sorted(c for c, p in placements.items() if p is not None) == [
        f"v/add_{i}" for i in (0, 1, 2, 3, 6, 7)
    ]
    assert crashing.batch_jobs == coordinator.compiles == 5


class _FailingInBatch:
    """Crashes one case's run inside its batch only; alone it runs normally."""

    def __init__(self, real: WorkerClient, case_id: str):
        self.real, self.case_id = real, case_id

    def execute(self, job):
        if isinstance(job, CaseJob) and job.batch_key is not None and job.case_id == self.case_id:
            job = dataclasses.replace(job, fault=("run", "crash"))
        return self.real.execute(job)


def test_a_case_that_is_not_a_pass_in_its_batch_takes_its_result_from_a_solo_run(worker, targets):
    llvm = targets["llvm-cpu"]
    cases = [_AddCase(f"w/add_{i}", float(i) + 200) for i in range(3)]  # programs of its own
    batch = Batch("test-batch", "llvm-cpu", tuple(cases))
    client = _FailingInBatch(worker, "w/add_1")
    coordinator = BatchCoordinator()
    results = {}
    for case in cases:
        results[case.case_id], _ = run_case(
            Attempt(case, llvm, placement=coordinator.placement(batch, case, llvm, client)), client
        )
    assert results["w/add_1"].status == "pass"
    assert results["w/add_1"].info["batch"] == {"size": 3, "in_batch": "crash", "ran_alone": True}
    # The worker died with the crash; the next case of the batch loads it again from the store.
    assert (
        results["w/add_2"].status == "pass" and "ran_alone" not in results["w/add_2"].info["batch"]
    )


def test_check_sites_of_batched_programs_map_back_to_each_case(worker, targets, tmp_path):
    llvm = targets["llvm-cpu"]
    template = """module @jit_main attributes {{mhlo.num_partitions = 1 : i32}} {{
  func.func public @main() -> tensor<2xf32> {{
    %0 = stablehlo.constant dense<[1.0, {value}]> : tensor<2xf32>
    %1 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    stablehlo.custom_call @check.expect_close(%0, %1) {{has_side_effect = true}} : (tensor<2xf32>, tensor<2xf32>) -> ()
    return %0 : tensor<2xf32>
  }}
}}
"""
    cases = []
    for name, value in [("good_a", "2.0"), ("bad", "7.0"), ("good_b", "2.0")]:
        path = tmp_path / f"{name}.mlir"
        path.write_text(template.format(value=value))
        cases.append(
            CheckCase(
                case_id=f"x/{name}",
                suite="stablehlo_files",
                kind="mlir",
                source_path=path,
                entry_function="main",
                import_options={"rewrite_checks": True},
            )
        )
    batch = Batch("test-batch", "llvm-cpu", tuple(cases))
    coordinator = BatchCoordinator()
    outcomes = {
        c.case_id: run_case(
            Attempt(c, llvm, placement=coordinator.placement(batch, c, llvm, worker)), worker
        )[0]
        for c in cases
    }
    assert outcomes["x/good_a"].status == outcomes["x/good_b"].status == "pass"
    assert outcomes["x/good_a"].info["batch"] == {"size": 3}
    bad = outcomes["x/bad"]
    assert (bad.status, bad.stage) == ("fail", "compare") and bad.info["batch"][
        "in_batch"
    ] == "fail-numerics"
    assert any("bad.mlir" in line for line in bad.diagnostics), bad.diagnostics


def test_a_warm_batch_reads_its_module_from_the_store_and_imports_nothing(tmp_path, targets):
    llvm = targets["llvm-cpu"]
    cases = [_AddCase(f"y/add_{i}", float(i)) for i in range(3)]
    batch = Batch("test-batch", "llvm-cpu", tuple(cases))
    runs = []
    for _ in range(2):  # a new worker and coordinator each time: only the store is shared
        client = WorkerClient(tmp_path / "store")
        try:
            coordinator = BatchCoordinator()
            runs.append(
                [
                    run_case(
                        Attempt(c, llvm, placement=coordinator.placement(batch, c, llvm, client)),
                        client,
                    )[0]
                    for c in cases
                ]
            )
        finally:
            client.close()
    cold, warm = runs
    assert all(o.status == "pass" for o in cold + warm)
    assert all(
        "compile" in o.stage_times and o.info["cache_hits"] == {"import": False, "compile": False}
        for o in cold
    )
    assert all("compile" not in o.stage_times and "import" not in o.stage_times for o in warm)
    assert all(
        o.info["cache_hits"] == {"import": True, "compile": True} and "store" in o.stage_times
        for o in warm
    )


def test_cases_known_to_fail_are_planned_alone(targets):
    llvm = targets["llvm-cpu"]
    cases = _cases(6)
    known = {"s/case_002", "s/case_004"}
    plan = plan_batches(
        [(c, llvm) for c in cases], 16, alone=lambda case, target: case.case_id in known
    )
    assert {case_id for _, case_id in plan} == {c.case_id for c in cases} - known


def test_a_changed_case_is_the_only_one_compiled_again(tmp_path, targets):
    llvm = targets["llvm-cpu"]
    first = [_AddCase(f"z/a_{i}", float(i)) for i in range(3)]
    second = [_AddCase(f"z/b_{i}", float(i) + 10) for i in range(3)]
    changed = [*first[:2], _AddCase("z/a_2", 9.0)]  # same id, another program
    hits = []
    for cases_a in (first, changed):
        client = WorkerClient(tmp_path / "store")
        try:
            coordinator = BatchCoordinator()
            batches = [
                Batch("a", "llvm-cpu", tuple(cases_a)),
                Batch("b", "llvm-cpu", tuple(second)),
            ]
            hits.append(
                [
                    None if p is None else p.cache_hits["compile"]
                    for b in batches
                    for p in (coordinator.placement(b, c, llvm, client) for c in b.cases)
                ]
            )
        finally:
            client.close()
    # The second time, a_0 and a_1 run in the first batch's module (the member index),
    # the changed a_2 is left alone (it compiles alone), and batch b is warm.
    assert hits == [[False] * 6, [True, True, None, True, True, True]]


class _WrongExpected(_AddCase):
    def expected_sets(self, input_sets):
        return [[np.arange(4, dtype=np.float32) + np.float32(self.value + 1)]]


def test_a_case_compiled_in_a_batch_is_warm_for_any_later_selection(tmp_path, targets):
    """A -k selection, a sample or another shard makes other batches: each case that a
    batch compiled runs in that batch's module and compiles nothing."""
    llvm = targets["llvm-cpu"]
    cases = [_AddCase(f"m/add_{i}", float(i)) for i in range(4)] + [_WrongExpected("m/bad", 5.0)]
    store = tmp_path / "store"
    client = WorkerClient(store)
    try:
        coordinator = BatchCoordinator()
        batch = Batch("all", "llvm-cpu", tuple(cases))
        # m/bad compiles in the batch but does not run (a run would compile it alone).
        assert coordinator.placement(batch, cases[4], llvm, client) is not None
        cold = [
            run_case(
                Attempt(c, llvm, placement=coordinator.placement(batch, c, llvm, client)), client
            )[0]
            for c in cases[:4]
        ]
    finally:
        client.close()
    assert [o.status for o in cold] == ["pass"] * 4
    client = WorkerClient(store)  # a new worker: only the store is shared
    try:
        # One case alone (a -k selection of one): it runs in the batch's module.
        alone, _ = run_case(Attempt(cases[1], llvm), client)
        assert alone.status == "pass", alone.diagnostics
        assert alone.info["cache_hits"] == {"import": True, "compile": True}
        assert alone.info["batch"] == {"size": 5}
        assert "compile" not in alone.stage_times and "import" not in alone.stage_times
        # Another composition (a sample): the members stay in their old batch's module,
        # the new case is left to run alone.
        fresh = _AddCase("m/new", 7.0)
        coordinator = BatchCoordinator()
        batch = Batch("other", "llvm-cpu", (cases[0], cases[3], fresh))
        placements = {c.case_id: coordinator.placement(batch, c, llvm, client) for c in batch.cases}
        assert placements["m/new"] is None
        for case in (cases[0], cases[3]):
            placement = placements[case.case_id]
            assert placement is not None and placement.cache_hits["compile"] is True
            outcome, _ = run_case(Attempt(case, llvm, placement=placement), client)
            assert outcome.status == "pass" and "compile" not in outcome.stage_times
        new, _ = run_case(Attempt(fresh, llvm), client)
        assert new.status == "pass" and new.info["cache_hits"]["compile"] is False
        # A case that is not a pass in the batch's module runs alone, and that is its result.
        bad, _ = run_case(Attempt(cases[4], llvm), client)
        assert (bad.status, bad.stage) == ("fail", "compare")
        assert bad.info["batch"] == {"size": 5, "in_batch": "fail-numerics", "ran_alone": True}
        assert bad.info["cache_hits"]["compile"] is False and "compile" in bad.stage_times
        # alone (--batch-size 1, bundles): compiled alone, never in the batch's module.
        solo, _ = run_case(Attempt(cases[2], llvm, AttemptSettings(alone=True)), client)
        assert solo.status == "pass" and "batch" not in solo.info
        assert solo.info["cache_hits"]["compile"] is False
    finally:
        client.close()


def test_sources_without_a_module_are_wrapped_in_one():
    from iree.compiler.api import Session

    bare = [
        MergeMember(
            f"bare{i}",
            _program(float(i))
            .replace("module attributes {mhlo.num_partitions = 1 : i32} {", "")
            .rstrip()
            .rstrip("}")
            .encode(),
            {},
        )
        for i in range(2)
    ]
    single = MergeMember(
        "single",
        b"func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n",
        {},
    )
    _, placed, left_out = merge_modules([*bare, single], Session().context)
    assert left_out == {} and [placed[c].public_functions for c in placed] == [
        ["main"],
        ["main"],
        ["main"],
    ]
    _, placed, left_out = merge_modules(
        [MergeMember("m", _program(0.0).encode(), {}), single], Session().context
    )
    assert list(placed) == ["m"] and "attributes differ" in left_out["single"]
