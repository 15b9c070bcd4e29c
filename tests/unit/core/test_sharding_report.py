import json
import random

import pytest

from iree_conformance.engine.sharding import (
    ShardError,
    assign,
    load_durations,
    parse_shard,
    record_durations,
)
from iree_conformance.report.markdown import (
    ReportError,
    load_results,
    render_markdown,
    write_results,
)


def test_parse_shard():
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "a/b", "3"):
        with pytest.raises(ShardError):
            parse_shard(bad)


def test_shards_balance_within_ten_percent_on_recorded_durations():
    rng = random.Random(7)
    keys = [f"llvm-cpu:case{i}" for i in range(1000)]
    durations = {k: rng.lognormvariate(0, 1) for k in keys}
    for count in (2, 3, 4, 8):
        shards = assign(keys, durations, count)
        loads = [sum(durations[k] for k, s in zip(keys, shards) if s == i) for i in range(count)]
        assert max(loads) <= 1.1 * min(loads), loads
    assert assign(keys, durations, 4) == assign(list(keys), dict(durations), 4)  # deterministic


def test_unknown_durations_use_the_median():
    shards = assign(["a", "b", "c", "d"], {"a": 10.0, "b": 1.0, "c": 1.0}, 2)
    assert shards.count(shards[0]) == 1  # 'a' alone; 'd' weighs the median (1.0) and joins b and c


def test_record_durations_merges(tmp_path):
    path = tmp_path / "d.json"
    record_durations(path, {"x": 1.0})
    record_durations(path, {"y": 2.0})
    assert load_durations(path) == {"x": 1.0, "y": 2.0}
    path.write_text("[1]")
    with pytest.raises(ShardError):
        load_durations(path)


def outcome(case_id, verdict, status="pass", stage="compare", diag=()):
    return {
        "case_id": case_id,
        "suite": "stablehlo",
        "target": "llvm-cpu",
        "status": status,
        "stage": stage,
        "verdict": verdict,
        "expected": None,
        "diagnostics": list(diag),
        "duration": 0.5,
        "stage_times": {"compile": 0.4},
    }


def test_results_round_trip_and_markdown(tmp_path):
    path = tmp_path / "r.json"
    outcomes = [
        outcome("a", "pass"),
        outcome(
            "b",
            "fail",
            "error",
            "compile",
            ["x.mlir:1:2: error: failed to legalize op 'stablehlo.foo' 1"],
        ),
        outcome(
            "c",
            "fail",
            "error",
            "compile",
            ["y.mlir:9:9: error: failed to legalize op 'stablehlo.foo' 2"],
        ),
        dict(outcome("d", "xfail", "error", "run"), expected="fail-run"),
    ]
    write_results(path, {"iree_compiler": "3.13.0", "os": "linux"}, outcomes)
    data = load_results(path)
    md = render_markdown(data)
    assert "| stablehlo | llvm-cpu | 1 | 1 | 0 | 2 | 0 | 0 | 4 |" in md
    assert "**compile** x2" in md  # grouped by normalized first error line
    assert "fail-run: 1" in md


def test_bad_results_file(tmp_path):
    with pytest.raises(ReportError, match="not found"):
        load_results(tmp_path / "none.json")
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(ReportError, match="not valid JSON"):
        load_results(tmp_path / "x.json")
    (tmp_path / "y.json").write_text(json.dumps({"schema": 99}))
    with pytest.raises(ReportError, match="schema"):
        load_results(tmp_path / "y.json")


def test_cli_update_expectations_from_results(tmp_path):
    import subprocess
    import sys

    from iree_conformance.common.tomlio import load_toml

    results = tmp_path / "r.json"
    write_results(
        results,
        {"os": "linux"},
        [
            outcome("a", "pass"),
            outcome("b", "fail", "error", "compile", ["error: nope"]),
        ],
    )
    (tmp_path / "llvm-cpu.toml").write_text('[xfail]\n"a" = { stage = "crash", reason = "old" }\n')
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "update-expectations",
            str(results),
            "--expectations-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert load_toml(tmp_path / "llvm-cpu.toml")["xfail"] == {
        "b": {"expect": "fail-compile", "reason": "error: nope"}
    }


def test_failure_lines_show_chosen_input_shapes(tmp_path):
    path = tmp_path / "r.json"
    chosen = dict(
        outcome("onnx-dir/det.onnx", "fail", "error", "compile", ["error: boom"]),
        info={"inputs": {"shapes": {"x": [1, 3, 320, 320], "sr": []}, "seed": 0}},
    )
    write_results(path, {"iree_compiler": "3.13.0", "os": "linux"}, [chosen])
    md = render_markdown(load_results(path))
    assert "`onnx-dir/det.onnx` (llvm-cpu, inputs x=1x3x320x320 sr=scalar)" in md
