"""The HTML report (iree-conformance report --html) on results files from real runs."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path

import onnx
import pytest
from onnx import helper

from iree_conformance.cli import main as cli
from iree_conformance.report.html import charts, inputs, operators, render, summary, trend
from tests.support.html_tables import Tables

RESULTS = Path(__file__).resolve().parents[2] / "fixtures" / "ci" / "results"
LINUX = RESULTS / "linux-py3.11.json"  # pass / xfail / skip (llvm-cpu and an absent vulkan)
BEFORE = RESULTS / "linux-py3.11-before-manifest.json"  # the same failures as verdict fail


def derive(tmp: Path, name: str, source: Path = LINUX, **meta) -> Path:
    """A copy of a real results file with some metadata changed (os, started, ...)."""
    data = json.loads(source.read_text(encoding="utf-8"))
    data["metadata"].update(meta)
    path = tmp / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def page_of(paths: list[Path], **options) -> tuple[str, Tables]:
    options.setdefault("generate_ops", False)
    html = render.render_html(inputs.load(paths), render.Options(**options)).html
    return html, Tables(html)


def matrix_cells(tables: Tables) -> dict[tuple[str, str, str], dict[str, str]]:
    head, *rows = tables.tables[render.MATRIX_ID]
    return {tuple(r[:3]): dict(zip(head[3:], r[3:])) for r in rows if r[0] != "total"}


def test_matrix_holds_the_counts_of_the_results_file():
    data = json.loads(BEFORE.read_text(encoding="utf-8"))
    html, tables = page_of([BEFORE])
    cells = matrix_cells(tables)
    expected = Counter((o["suite"], o["target"], o["verdict"]) for o in data["outcomes"])
    assert len(cells) == len({(s, t) for s, t, _ in expected})
    for (suite, target, verdict), n in expected.items():
        assert cells[(suite, target, "linux/x86_64 py3.11")][verdict] == str(n)
    total_row = tables.tables[render.MATRIX_ID][-1]
    assert total_row[0] == "total" and total_row[-2] == str(len(data["outcomes"]))
    assert "IREE compiler" in html and data["metadata"]["iree_compiler"] in html
    assert data["metadata"]["onnxruntime"] in html and data["metadata"]["started"] in html


def test_flaky_and_unknown_verdicts_get_columns(tmp_path):
    data = json.loads(LINUX.read_text(encoding="utf-8"))
    passing = [o for o in data["outcomes"] if o["verdict"] == "pass"]
    passing[0]["verdict"], passing[1]["verdict"], passing[2]["verdict"] = "flaky", "flaky", "wobbly"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    _, tables = page_of([path])
    head = tables.tables[render.MATRIX_ID][0]
    assert head[3:] == [
        "pass",
        "xfail",
        "flaky",
        "fail",
        "xpass",
        "skip",
        "wobbly",
        "total",
        "share",
    ]
    total = dict(zip(head[3:], tables.tables[render.MATRIX_ID][-1][1:]))  # "total" spans 3 columns
    assert total["flaky"] == "2" and total["wobbly"] == "1"


def test_not_judged_cases_get_a_column_and_a_section(tmp_path):
    data = json.loads(LINUX.read_text(encoding="utf-8"))
    passing = [o for o in data["outcomes"] if o["verdict"] == "pass"]
    for o in passing[:2]:
        o.update(status="error", stage="reference", verdict="skip", diagnostics=["no <shape>"])
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    html, tables = page_of([path])
    head = tables.tables[render.MATRIX_ID][0]
    total = dict(zip(head[3:], tables.tables[render.MATRIX_ID][-1][1:]))
    assert total["not judged"] == "2"
    assert '<h2 id="not-judged">Not judged (2)</h2>' in html and "no &lt;shape&gt;" in html
    assert [r[2] for r in tables.tables["not-judged-cases"][1:]] == ["no <shape>"] * 2
    assert "Most cases of this run were not judged" not in html


def test_a_users_programs_harness_steps_get_a_section_in_html_and_markdown(tmp_path, capsys):
    """info.preparation (model/preparation.py) is shown where the verdict is (issue 55)."""
    data = json.loads(LINUX.read_text(encoding="utf-8"))
    mine = next(o for o in data["outcomes"] if o["verdict"] == "pass")
    steps = ["exported by torch.export.export, non-strict (torch's default)", "reference <weak>"]
    mine.setdefault("info", {})["preparation"] = steps
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    html, tables = page_of([path])
    assert '<h2 id="prepared">What the harness did beyond the program as given (1)</h2>' in html
    assert tables.tables["prepared-cases"][1:] == [
        [mine["case_id"], mine["target"], "pass", "; ".join(steps)]
    ]
    assert "reference &lt;weak&gt;" in html
    assert cli.main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "### What the harness did beyond the program as given (1)" in text
    assert "(llvm-cpu, pass): exported by torch.export.export, non-strict" in text


def test_same_run_merges_platforms_and_older_runs_are_history(tmp_path):
    today = derive(tmp_path, "linux.json", started="2026-12-01T02:30:00+00:00")
    # 11 hours earlier, across midnight: still the same run.
    mac = derive(
        tmp_path,
        "mac.json",
        os="macos",
        arch="arm64",
        python="3.12.1",
        started="2026-11-30T15:30:00+00:00",
    )
    old = derive(tmp_path, "old.json", BEFORE, started="2026-11-28T02:30:00+00:00")
    current, history = inputs.split_current(inputs.load([old, today, mac]))
    assert [x.source for x in current] == ["linux.json", "mac.json"]
    assert [x.source for x in history] == ["old.json"]
    html, tables = page_of([old, today, mac])
    platforms = {k[2] for k in matrix_cells(tables)}
    assert platforms == {"linux/x86_64 py3.11", "macos/arm64 py3.12"}
    assert 'id="trend"' in html and "<polyline" in html
    assert "history: old.json" in html


def test_trend_points_per_day_and_carried_forward(tmp_path):
    day1 = derive(tmp_path, "d1.json", BEFORE, started="2026-11-28T02:00:00+00:00")
    day2 = derive(tmp_path, "d2.json", started="2026-11-29T02:00:00+00:00")
    points = trend.points_of(inputs.load([day1, day2]))
    by = {(p["day"], p["suite"]): p["pass"] for p in points}
    assert by[("2026-11-28", "onnx_ops")] == 11 and by[("2026-11-29", "onnx_ops")] == 11
    assert by[("2026-11-28", "stablehlo")] == 82
    saved = tmp_path / "trend.json"
    trend.write_trend(saved, points)
    old = [{**p, "pass": 0} for p in trend.read_trend(saved)] + [
        {"day": "2026-11-20", "suite": "stablehlo", "pass": 70, "total": 166}
    ]
    combined = trend.combine(old, trend.points_of(inputs.load([day2])))
    days = {p["day"]: p for p in combined if p["suite"] == "stablehlo"}
    assert sorted(days) == ["2026-11-20", "2026-11-28", "2026-11-29"]
    assert (
        days["2026-11-29"]["pass"] == 82 and days["2026-11-28"]["pass"] == 0
    )  # file wins, old kept
    assert trend.read_trend(tmp_path / "absent.json") == []


def test_funnel_counts_the_stage_each_case_reached():
    def o(status, stage):
        return {
            "case_id": f"s/{status}{stage}",
            "suite": "s",
            "target": "t",
            "status": status,
            "stage": stage,
        }

    cases = [
        o("pass", "compare"),
        o("error", "import"),
        o("error", "compile"),
        o("crash", "compile"),
        o("timeout", "run"),
        o("fail", "compare"),
        o("error", "reference"),
        o("skip", "prepare"),
    ]
    (f,) = summary.funnels(cases)
    # The error at reference is not judged: IREE's stages only, of the cases judged.
    assert f.runnable == 6
    assert f.passed == {"import": 5, "compile": 3, "run": 2, "numerics": 1}
    assert f.rate("numerics") == pytest.approx(1 / 6)


def test_failure_groups_count_and_name_the_cases():
    data = json.loads(BEFORE.read_text(encoding="utf-8"))
    failing = [o for o in data["outcomes"] if o["status"] not in ("pass", "skip")]
    groups = summary.failure_groups(data["outcomes"])
    assert sum(len(g.members) for g in groups) == len(failing) == 21
    assert all(g.unexpected == len(g.members) for g in groups)  # no manifest: every one is a fail
    _, tables = page_of([BEFORE])
    rows = tables.tables["failure-groups"][1:]
    assert sum(int(r[1]) for r in rows) == 21
    biggest = max(groups, key=lambda g: len(g.members))
    assert any(biggest.cases[0] in r[4] for r in rows)


def test_operator_from_the_model_skips_constants(tmp_path):
    const = helper.make_node(
        "Constant", [], ["c"], value=helper.make_tensor("v", onnx.TensorProto.FLOAT, [1], [1.0])
    )
    add = helper.make_node("Add", ["x", "c"], ["y"])
    vi = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [1]) for n in ("x", "y")]
    model = helper.make_model(helper.make_graph([const, add], "g", vi[:1], vi[1:]))
    case = tmp_path / "onnx-node-tests-9.9" / "test_weird_name_variant"
    case.mkdir(parents=True)
    onnx.save(model, str(case / "model.onnx"))
    found = operators.resolve(
        {"test_weird_name_variant", "test_reduce_sum_keepdims", "test_zzz_thing"},
        tmp_path,
        ["9.9"],
        generate=False,
    )
    assert found.ops == {
        "test_weird_name_variant": "Add",
        "test_reduce_sum_keepdims": "ReduceSum",
        "test_zzz_thing": "zzz",
    }
    assert found.exact == {"test_weird_name_variant"}


def test_operator_names_by_heuristic():
    ops = ["ArgMax", "Cast", "CastLike", "DFT", "Sum", "ReduceSum", "ReduceSumSquare"]
    assert operators.op_from_name("test_argmax_default_axis", ops) == "ArgMax"
    assert operators.op_from_name("test_castlike_FLOAT_to_DOUBLE", ops) == "CastLike"
    assert operators.op_from_name("test_cast_FLOAT_to_DOUBLE", ops) == "Cast"
    assert operators.op_from_name("test_reduce_sum_square_default", ops) == "ReduceSumSquare"
    assert operators.op_from_name("test_dft", ops) == "DFT"


def test_scoreboard_links_failing_cells_to_the_failing_cases(tmp_path):
    html, tables = page_of([BEFORE], data_dir=tmp_path)
    board = tables.tables["operator-scoreboard"]
    assert board[0][0] == "operator" and len(board[0]) == 3  # llvm-cpu and vulkan, one platform
    rows = {r[0]: r[1:] for r in board[1:]}
    assert rows["Abs"][1] == "skip"  # vulkan is absent here
    data = json.loads(BEFORE.read_text(encoding="utf-8"))
    dft = [
        o
        for o in data["outcomes"]
        if o["case_id"].startswith("onnx-ops/test_dft") and o["target"] == "llvm-cpu"
    ]
    dft_pass = sum(o["status"] == "pass" for o in dft)
    assert rows["DFT"][0] == f"{dft_pass}/{len(dft)}"
    anchors = {h[1:] for h in tables.hrefs if h.startswith("#op-")}
    assert "op-DFT" in anchors
    assert {h[1:] for h in tables.hrefs if h.startswith("#")} <= tables.ids  # no dangling link
    section = html[html.index('id="op-DFT"') :]
    section = section[: section.index("</section>")]
    for o in dft:
        if o["status"] != "pass":
            assert o["case_id"] in section


def test_page_is_self_contained_and_escapes_diagnostics(tmp_path):
    data = json.loads(BEFORE.read_text(encoding="utf-8"))
    bad = next(o for o in data["outcomes"] if o["verdict"] == "fail")
    bad["diagnostics"] = ["error: <script>alert(1)</script> & more"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    html, _ = page_of([path])
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html


def test_slowest_cases_are_sorted_by_duration():
    data = json.loads(LINUX.read_text(encoding="utf-8"))
    _, tables = page_of([LINUX], slowest=5)
    rows = tables.tables["slowest-cases"][1:]
    want = sorted(data["outcomes"], key=lambda o: -o["duration"])[:5]
    assert [r[0] for r in rows] == [o["case_id"] for o in want]


def test_stacked_bar_and_line_chart_geometry():
    bar = charts.stacked_bar(Counter(pass_=0, xfail=1, fail=3), ["pass", "xfail", "fail"], 100)
    assert [(s.verdict, s.width) for s in bar] == [("xfail", 25.0), ("fail", 75.0)]
    chart = charts.line_chart(
        ["2026-11-01", "2026-11-02"], {"pass": [5, 10]}, width=200, height=100, pad=10
    )
    assert chart.lines[0]["points"] == "10.0,50.0 190.0,10.0"  # 5 of 10: half way up


def test_cli_writes_html_and_trend(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    old = derive(tmp_path, "old.json", BEFORE, started="2026-11-20T02:00:00+00:00")
    out, points = tmp_path / "out" / "report.html", tmp_path / "out" / "trend.json"
    common = [
        "report",
        str(LINUX),
        str(old),
        "--html",
        str(out),
        "--no-generate-ops",
        "--onnx-data-dir",
        str(tmp_path),
    ]
    assert (
        cli.main([*common, "--trend", str(tmp_path / "none.json"), "--trend-out", str(points)]) == 0
    )
    assert 'id="matrix"' in out.read_text(encoding="utf-8")
    assert capsys.readouterr().out == ""  # with --html, Markdown only goes to --output
    assert {p["day"] for p in trend.read_trend(points)} == {"2026-11-20", "2026-11-30"}
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    assert cli.main([*common, "--trend", str(tmp_path / "bad.json")]) == 2


def test_cli_markdown_of_one_file_is_unchanged(capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert cli.main(["report", str(BEFORE)]) == 0
    from iree_conformance.report.markdown import load_results, render_markdown

    assert capsys.readouterr().out == render_markdown(load_results(BEFORE))


def test_merged_copy_gives_the_same_matrix(tmp_path):
    merged = tmp_path / "merged.json"
    merged.write_text(json.dumps(inputs.merge_loaded(inputs.load([BEFORE]))), encoding="utf-8")
    assert matrix_cells(page_of([merged])[1]) == matrix_cells(page_of([BEFORE])[1])


def test_unknown_stage_is_not_counted_as_passing_anything():
    case = copy.deepcopy(
        {"case_id": "s/x", "suite": "s", "target": "t", "status": "error", "stage": "mystery"}
    )
    (f,) = summary.funnels([case])
    assert f.passed == {"import": 0, "compile": 0, "run": 0, "numerics": 0}


def test_a_repeated_run_counts_once_the_latest_kept(tmp_path):
    first = derive(tmp_path, "first.json", BEFORE, started="2026-12-01T01:00:00+00:00")
    again = derive(tmp_path, "again.json", LINUX, started="2026-12-01T03:00:00+00:00")
    html, tables = page_of([again, first])
    assert matrix_cells(tables) == matrix_cells(page_of([LINUX])[1])
    n = len(json.loads(LINUX.read_text(encoding="utf-8"))["outcomes"])
    assert f"{n} repeated outcome(s)" in html
