"""Compile statistics: IREE's statistics file read, and ``compare`` listing a change of the
dispatch count or the module size (report/compile_stats.py, cli/compare.py)."""

from __future__ import annotations

import json

from iree_conformance.cli.main import main
from iree_conformance.engine.worker.compiler import compile_statistics, parse_statistics
from iree_conformance.report.compile_stats import compare_compile_stats, stat_change_lines

# What iree-compile 3.13 wrote for a two-op function (--iree-scheduling-dump-statistics-format=json).
STATISTICS = """{
"stream-aggregate": {
  "global": {"constant-count": 0, "constant-size": 0, "variable-count": 0, "variable-size": 0},
  "synchronization": {"await-count": 1},
  "execution": {"submission-count": 1, "transient-memory-size": 16, "fill-count": 0,
                "copy-count": 0, "dispatch-count": 3, "call-count": 0},
  "executable": {"executable-count": 2}
}
}"""


def _outcome(case_id, dispatches=None, size=None, scope="case", status="pass"):
    o = {"case_id": case_id, "target": "cpu", "suite": "s", "status": status, "verdict": status}
    if size is not None:
        stats = {"module_bytes": size, "scope": scope}
        if dispatches is not None:
            stats["dispatches"] = dispatches
        o["metrics"] = {"compile_stats": stats}
    return o


def _write(tmp_path, name, outcomes):
    path = tmp_path / name
    path.write_text(json.dumps({"schema": 1, "metadata": {}, "outcomes": outcomes}))
    return str(path)


def test_the_statistics_file_gives_dispatches_and_executables():
    assert parse_statistics(STATISTICS) == {"dispatches": 3, "executables": 2}
    assert parse_statistics("") == {} and parse_statistics('{"other": 1}') == {}
    stats = compile_statistics(b"x" * 100, {"dispatches": 3}, "batch", 4)
    assert stats == {"module_bytes": 100, "dispatches": 3, "scope": "batch", "batch_size": 4}


def test_a_dispatch_change_is_listed_however_small():
    base = [_outcome("a", 4, 10_000), _outcome("b", 1, 9_000)]
    new = [_outcome("a", 5, 10_100), _outcome("b", 1, 9_000)]
    changes, compared = compare_compile_stats(base, new)
    assert compared == 2
    (change,) = changes
    assert change.kind == "dispatches" and change.worse and change.key == ("cpu", "a")
    assert change.describe() == "dispatches 4 -> 5 (+25.0%)"


def test_module_size_needs_1_kib_and_the_effect_size():
    base = [_outcome("a", 1, 10_000), _outcome("b", 1, 100_000), _outcome("c", 1, 3_000)]
    new = [_outcome("a", 1, 10_900), _outcome("b", 1, 80_000), _outcome("c", 1, 3_900)]
    changes, _ = compare_compile_stats(base, new)
    # a: +9 % (under 10 %); c: +30 % but under 1 KiB; b: -20 %, 20 KB.
    assert [(c.key[1], c.kind, c.worse) for c in changes] == [("b", "module size", False)]


def test_other_scopes_and_missing_figures_are_not_compared():
    base = [_outcome("a", 4, 10_000, scope="batch"), _outcome("b"), _outcome("c", None, 5_000)]
    new = [_outcome("a", 1, 5_000, scope="case"), _outcome("b"), _outcome("c", 3, 5_000)]
    changes, compared = compare_compile_stats(base, new)
    assert changes == [] and compared == 1  # c: no dispatch count on one side, same size
    assert stat_change_lines([], 0) == []
    assert stat_change_lines([], 1) == [
        "Compile statistics: no change in dispatch count or module size (1 case(s))."
    ]


def test_compare_lists_the_change_and_exits_1_when_a_module_grew(tmp_path, capsys):
    a = _write(tmp_path, "a.json", [_outcome("a", 4, 10_000), _outcome("b", 2, 9_000)])
    b = _write(tmp_path, "b.json", [_outcome("a", 6, 10_000), _outcome("b", 2, 9_000)])
    assert main(["compare", a, b]) == 1
    out = capsys.readouterr().out
    assert "Compile statistics changed (1, over 2 case(s)):" in out
    assert "a on cpu: dispatches 4 -> 6 (+50.0%)" in out
    # Fewer dispatches is a change listed, not a failure.
    assert main(["compare", b, a]) == 0
    assert "dispatches 6 -> 4" in capsys.readouterr().out
    assert main(["compare", a, a, "--markdown"]) == 0
    assert "no change in dispatch count" in capsys.readouterr().out
