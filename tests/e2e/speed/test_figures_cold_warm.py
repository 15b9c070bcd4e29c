"""Figures you can act on (issue 45), on the bundled StableHLO cases the issue named: the
same commit run cold, then warm on the same store, with --benchmark. Before, every case's
memory was "less by 88 %" one way and "more by 765 %" the other (the worker's high-water
mark held the compiler after a cold compile), and the warm run gave IREE one sample and no
reference, which compare cannot judge."""

from __future__ import annotations

import copy
import json

import pytest

from iree_conformance.cli.main import main
from iree_conformance.report import speed
from tests.support.core_helpers import run_conformance_pytest

CASES = "seed_softmax_100000 or mlp_layer_relu or reduce_sum_random_f32 or sort_f32 or seed_cos_sin"


@pytest.fixture(scope="module")
def cold_and_warm(tmp_path_factory):
    pytest.importorskip("jax", reason="XLA's timing needs JAX: pip install -e '.[jax]'")
    work = tmp_path_factory.mktemp("figures")
    files = {}
    for name in ("cold", "warm"):
        files[name] = work / f"{name}.json"
        proc = run_conformance_pytest(
            "-k", CASES, "--benchmark", "--offline", "-n", "0",
            "--store-dir", str(work / "store"), "--report-json", str(files[name]),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return files


def _outcomes(path):
    return json.loads(path.read_text())["outcomes"]


def test_a_warm_benchmark_run_gives_every_case_what_compare_needs(cold_and_warm):
    warm = _outcomes(cold_and_warm["warm"])
    assert len(warm) == 5
    assert all("compile" not in o["stage_times"] for o in warm), "the second run was not warm"
    for o in warm:
        bench = o["metrics"]["benchmark"]
        assert "from_checked_run" not in bench["iree"], o["case_id"]
        assert len(bench["iree"]["samples_s"]) >= 20, o["case_id"]
        ref = bench.get("reference")
        assert ref and ref["interleaved"] is True, (o["case_id"], bench.get("reference_missing"))
        assert len(ref["samples_s"]) == len(bench["iree"]["samples_s"])


def test_memory_is_the_same_cold_and_warm_and_not_compared_as_history(cold_and_warm):
    cold, warm = (_outcomes(cold_and_warm[k]) for k in ("cold", "warm"))
    for base, new in ((cold, warm), (warm, cold)):
        c = speed.compare_results(base, new)
        assert [ch for ch in c.changes if ch.kind != "time"] == [], c.changes
        assert not c.no_data, c.no_data
    by_case = {o["case_id"]: o["metrics"]["benchmark"]["memory"] for o in cold}
    for o in warm:
        memory, before = o["metrics"]["benchmark"]["memory"], by_case[o["case_id"]]
        assert memory["allocated_bytes"] == before["allocated_bytes"], o["case_id"]
        assert memory["rss_growth_how"] == before["rss_growth_how"]
        assert (
            abs(memory["rss_growth_bytes"] - before["rss_growth_bytes"]) < speed.MEMORY_FLOOR_BYTES
        )
    softmax = by_case["stablehlo/seed_softmax_100000"]["allocated_bytes"]
    assert softmax["device"] >= 400_000  # its f32[100000] input on the device


def test_an_injected_slowdown_and_device_memory_are_regressions(cold_and_warm, tmp_path, capsys):
    warm = json.loads(cold_and_warm["warm"].read_text())
    injected = copy.deepcopy(warm)
    for o in injected["outcomes"]:
        bench = o["metrics"]["benchmark"]
        if o["case_id"] == "stablehlo/sort_f32":
            bench["iree"]["samples_s"] = [x * 1.3 for x in bench["iree"]["samples_s"]]
        if o["case_id"] == "stablehlo/seed_softmax_100000":
            bench["memory"]["allocated_bytes"]["device"] *= 2
    path = tmp_path / "injected.json"
    path.write_text(json.dumps(injected))
    assert main(["compare", str(cold_and_warm["warm"]), str(path)]) == 1
    out = capsys.readouterr().out
    assert "stablehlo/sort_f32 on llvm-cpu: slower by 30.0 %" in out
    assert "stablehlo/seed_softmax_100000 on llvm-cpu: more device memory by 100.0 %" in out
    (line,) = [x for x in out.splitlines() if x.startswith("Regressions")]
    assert (
        "time: stablehlo/sort_f32" in line
        and "device memory: stablehlo/seed_softmax_100000" in line
    )
