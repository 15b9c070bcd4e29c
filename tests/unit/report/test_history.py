"""The history site (iree-conformance history): nights from a real run's results, the
"failing since" of a case that starts failing, the flaky record, folding into weeks
(the state's size stays bounded), escaping, and the errors a bad input gets."""

from __future__ import annotations

import copy
import datetime
import json
import re
from pathlib import Path
from typing import Any

import pytest

from devtools import history_site_check as check
from iree_conformance.cli import main as cli
from iree_conformance.report.html import history, history_command, site

ROOT = Path(__file__).resolve().parents[3]
LINUX = ROOT / "tests" / "fixtures" / "ci" / "results" / "linux-py3.11.json"  # a real run


def real() -> dict[str, Any]:
    return json.loads(LINUX.read_text(encoding="utf-8"))


def write_nights(tmp_path: Path, docs: list[dict[str, Any]]) -> list[str]:
    paths = []
    for i, doc in enumerate(docs, 1):
        p = tmp_path / f"night-{i}.json"
        p.write_text(json.dumps(doc), encoding="utf-8")
        paths.append(str(p))
    return paths


def night_doc(base: dict[str, Any], day: datetime.date, version: str = "3.13.0") -> dict[str, Any]:
    doc = copy.deepcopy(base)
    doc["metadata"]["started"] = f"{day.isoformat()}T02:23:00+00:00"
    doc["metadata"]["finished"] = f"{day.isoformat()}T03:40:00+00:00"
    doc["metadata"]["iree_compiler"] = version
    return doc


def set_verdict(doc: dict[str, Any], case_id: str, verdict: str, status: str) -> None:
    hits = [o for o in doc["outcomes"] if o["case_id"] == case_id and o["target"] == "llvm-cpu"]
    assert hits, case_id
    for o in hits:
        o.update(verdict=verdict, status=status, reason=f"{verdict} here")


def cell_of(state: dict[str, Any], case_id: str) -> dict[str, Any]:
    return state["cases"][case_id]["cells"]["llvm-cpu linux/x86_64"]


def test_three_nights_a_case_that_starts_failing_on_the_second(tmp_path):
    nights, case = check.derive_nights(real())
    paths = write_nights(tmp_path, nights)
    state_path, site_dir = tmp_path / "history.json", tmp_path / "site"
    assert (
        cli.main(["history", *paths, "--state-out", str(state_path), "--site", str(site_dir)]) == 0
    )

    state = json.loads(state_path.read_text(encoding="utf-8"))
    assert [n["day"] for n in state["nights"]] == [d["metadata"]["started"][:10] for d in nights]
    cell = cell_of(state, case["case_id"])
    assert cell["nights"] == "PFF"
    streak = history.streak(state, cell)
    assert (streak.state, streak.since, streak.last_pass) == (
        "failing",
        state["nights"][1]["id"],
        state["nights"][0]["id"],
    )
    assert streak.since_iree == "3.13.0"  # the fixture's IREE
    # A case that already failed on the first night may have failed before: no start.
    xfail = next(o for o in nights[0]["outcomes"] if o["verdict"] == "xfail")
    old = history.streak(state, state["cases"][xfail["case_id"]]["cells"]["llvm-cpu linux/x86_64"])
    assert (old.state, old.since, old.last_pass) == ("failing", None, None)
    skipped = state["cases"][case["case_id"]]["cells"]["vulkan linux/x86_64"]  # no Vulkan here
    assert skipped["nights"] == "sss" and history.flaky_record(state, skipped) == (0, 0, None)
    assert history.streak(state, skipped).state is None

    page = (site_dir / "cases" / f"{site.slug(case['case_id'])}.html").read_text(encoding="utf-8")
    said = check.started_failing(page)
    assert len(said) == 1 and state["nights"][1]["day"] in said[0], said
    index = (site_dir / "index.html").read_text(encoding="utf-8")
    assert check.trend_points(index, case["suite"], "llvm-cpu linux/x86_64") == 3
    entries = json.loads(re.search(r'id="case-index">(.*?)</script>', index, re.S).group(1))
    (entry,) = [e for e in entries if e[0] == case["case_id"]]
    assert entry[1] == f"cases/{site.slug(case['case_id'])}.html" and "failing" in entry[2]
    assert len(entries) == len({o["case_id"] for o in nights[0]["outcomes"]})
    failing_rows = index.split('id="failing"')[1].split("</table>")[0]
    assert case["case_id"] in failing_rows and xfail["case_id"] not in failing_rows
    old_page = (site_dir / "cases" / f"{site.slug(xfail['case_id'])}.html").read_text(
        encoding="utf-8"
    )
    assert "since before the history began" in check.started_failing(old_page)[0]
    # Every page is self-contained: nothing fetched from elsewhere.
    for html in (page, index):
        assert not re.search(r'<(script|link|img)[^>]+(src|href)="', html)
        assert "http://" not in html and "https://" not in html


def test_the_page_names_the_iree_version_it_started_failing_with(tmp_path):
    case_id = "onnx-ops/test_ReLU"
    docs = [
        night_doc(real(), datetime.date(2026, 11, d), v)
        for d, v in ((20, "3.12.0"), (21, "3.13.0"), (22, "3.13.0"))
    ]
    for doc in docs[1:]:
        set_verdict(doc, case_id, "fail", "fail-numerics")
    site_dir = tmp_path / "site"
    assert cli.main(["history", *write_nights(tmp_path, docs), "--site", str(site_dir)]) == 0
    page = (site_dir / "cases" / f"{site.slug(case_id)}.html").read_text(encoding="utf-8")
    (said,) = check.started_failing(page)
    assert "2026-11-21" in said and "IREE 3.13.0" in said
    assert "last passed on the night of 2026-11-20 02:23 UTC (IREE 3.12.0)" in said
    assert "fail-numerics: fail here" in page  # the latest failure's message


def test_the_site_has_a_version_axis_with_what_each_version_changed(tmp_path):
    worse, better = "onnx-ops/test_ReLU", "onnx-ops/test_abs"
    docs = [
        night_doc(real(), datetime.date(2026, 11, d), v)
        for d, v in ((20, "3.12.0"), (21, "3.12.0"), (22, "3.13.0"), (23, "3.13.0"))
    ]
    for doc in docs[:2]:
        set_verdict(doc, better, "fail", "fail-compile")
    set_verdict(docs[2], worse, "fail", "fail-numerics")
    set_verdict(docs[3], worse, "fail", "fail-numerics")
    # absent on the first night of the new version: its first verdict there is the next one
    docs[2]["outcomes"] = [o for o in docs[2]["outcomes"] if o["case_id"] != better]
    state_path, site_dir = tmp_path / "h.json", tmp_path / "site"
    paths = write_nights(tmp_path, docs)
    assert (
        cli.main(["history", *paths, "--state-out", str(state_path), "--site", str(site_dir)]) == 0
    )
    state = json.loads(state_path.read_text(encoding="utf-8"))
    runs = history.version_runs(state)
    assert [(r.version, r.first, r.last) for r in runs] == [("3.12.0", 0, 1), ("3.13.0", 2, 3)]
    (step,) = history.version_steps(state)
    cell = "llvm-cpu linux/x86_64"
    assert step.newly_failing == [(worse, cell)] and step.newly_passing == [(better, cell)]
    index = (site_dir / "index.html").read_text(encoding="utf-8")
    section = index.split('id="versions"')[1].split('id="started-failing"')[0]
    assert "3.12.0 &rarr; 3.13.0 (2026-11-22): 1 newly failing, 1 newly passing" in section
    assert f'href="cases/{site.slug(worse)}.html"' in section.split("Newly passing")[0]
    assert f'href="cases/{site.slug(better)}.html"' in section.split("Newly passing")[1]


def test_one_version_has_no_step():
    state = {"nights": [{"iree_compiler": "3.13.0"}] * 2, "cases": {}}
    assert history.version_steps(state) == [] and len(history.version_runs(state)) == 1


def test_state_carried_across_runs_equals_one_run(tmp_path):
    nights, _ = check.derive_nights(real())
    paths = write_nights(tmp_path, nights)
    once, step = tmp_path / "once.json", tmp_path / "step.json"
    assert cli.main(["history", *paths, "--state-out", str(once)]) == 0
    for p in paths:
        assert cli.main(["history", p, "--state", str(step)]) == 0  # read, then written back
    assert json.loads(once.read_text()) == json.loads(step.read_text())
    # Re-running one night replaces it instead of adding a fourth.
    assert cli.main(["history", paths[-1], "--state", str(step)]) == 0
    assert json.loads(once.read_text()) == json.loads(step.read_text())


def test_flaky_record(tmp_path):
    case_id = "onnx-ops/test_ReLU"
    state = history.empty_state()
    for d in range(1, 8):
        doc = night_doc(real(), datetime.date(2026, 10, d))
        if d in (2, 5):
            set_verdict(doc, case_id, "flaky", "fail-numerics")
        (night,) = history_command.nights_of(
            [history_command.inputs.Loaded("n", doc, history_command.inputs.started_of(doc))]
        )
        history.add_night(state, night)
    history.fold(state, keep_nights=3, keep_weeks=10)  # night 2 folded, night 5 kept
    flaky, ran, last = history.flaky_record(state, cell_of(state, case_id))
    assert (flaky, ran, last[:10]) == (2, 7, "2026-10-05")
    site_dir = tmp_path / "site"
    site.build_site(state, site_dir)
    page = (site_dir / "cases" / f"{site.slug(case_id)}.html").read_text(encoding="utf-8")
    assert "Flaky on 2 of 7 night(s), last on the night of 2026-10-05" in page
    index = (site_dir / "index.html").read_text(encoding="utf-8")
    assert case_id in index.split('id="flaky"')[1].split("</table>")[0]


def _add(state: dict[str, Any], doc: dict[str, Any]) -> None:
    loaded = history_command.inputs.Loaded("n", doc, history_command.inputs.started_of(doc))
    (night,) = history_command.nights_of([loaded])
    history.add_night(state, night)
    history.fold(state)


def test_size_stays_bounded_as_nights_accumulate(tmp_path):
    """600 nights: the state and the site stop growing once the kept weeks are full, and
    "failing since" outlives the folding (the night it names was dropped long ago)."""
    base = real()
    base["outcomes"] = [o for o in base["outcomes"] if o["target"] == "llvm-cpu"][:60]
    case_id = "onnx-ops/test_ReLU"
    assert case_id in {o["case_id"] for o in base["outcomes"]}
    state = history.empty_state()
    start = datetime.date(2025, 1, 1)
    sizes: dict[int, tuple[int, int]] = {}
    first_fail = None
    for i in range(600):
        doc = night_doc(base, start + datetime.timedelta(days=i), f"3.{i // 100}.0")
        if i >= 10:
            set_verdict(doc, case_id, "fail", "fail-numerics")
        _add(state, doc)
        if i == 10:
            first_fail = state["nights"][-1]["id"]
        if i + 1 in (100, 450, 600):
            site_dir = tmp_path / f"site-{i + 1}"
            stats = site.build_site(state, site_dir)
            state_bytes = len(json.dumps(state, separators=(",", ":"), sort_keys=True))
            sizes[i + 1] = (state_bytes, stats.bytes)
    assert len(state["nights"]) == history.KEEP_NIGHTS
    assert len(state["weeks"]) == history.KEEP_WEEKS
    assert {
        len(c["nights"]) + len(c["weeks"])
        for case in state["cases"].values()
        for c in case["cells"].values()
    } == {history.KEEP_NIGHTS + history.KEEP_WEEKS}
    (s100, w100), (s450, w450), (s600, w600) = sizes[100], sizes[450], sizes[600]
    assert s100 < s450 and w100 < w450  # growing while the weeks fill up...
    assert s600 <= s450 * 1.02 and w600 <= w450 * 1.02, sizes  # ...then flat
    streak = history.streak(state, cell_of(state, case_id))
    assert streak.state == "failing" and streak.since == first_fail and streak.since_iree == "3.0.0"
    assert streak.last_pass == "2025-01-10T02:23:00+00:00"
    weeks = {p["week"] for p in state["trend_weeks"]}
    assert weeks == {w["week"] for w in state["weeks"]}


def test_folding_keeps_the_worst_verdict_of_a_week():
    assert history.worst("PPFP") == "F"
    assert history.worst("Pk") == "k"
    assert history.worst("s.") == "s"
    assert history.week_of("2026-12-01") == "2026-W49"


def test_hostile_case_id_is_escaped(tmp_path):
    doc = night_doc(real(), datetime.date(2026, 11, 1))
    evil = 'onnx-ops/</script><script>alert("x")</script><img src=x>'
    doc["outcomes"][0]["case_id"] = evil
    doc["outcomes"][0]["reason"] = "<b>bold</b>"
    doc["outcomes"][0]["verdict"] = "fail"
    site_dir = tmp_path / "site"
    assert cli.main(["history", *write_nights(tmp_path, [doc]), "--site", str(site_dir)]) == 0
    for page in [site_dir / "index.html", *sorted((site_dir / "cases").glob("*.html"))]:
        html = page.read_text(encoding="utf-8")
        assert "<script>alert" not in html and "<img src=x>" not in html and "<b>bold" not in html
    assert "/" not in site.slug(evil) and len(site.slug(evil)) < 100


def test_a_case_new_on_a_later_night_fails_since_that_night():
    state = history.empty_state()
    for d in (1, 2):
        doc = night_doc(real(), datetime.date(2026, 11, d))
        if d == 2:
            new = copy.deepcopy(doc["outcomes"][0])
            new.update(
                case_id="onnx-ops/test_new",
                target="llvm-cpu",
                verdict="fail",
                status="fail-compile",
            )
            doc["outcomes"].append(new)
        _add(state, doc)
    streak = history.streak(state, cell_of(state, "onnx-ops/test_new"))
    assert (streak.state, streak.since) == ("failing", state["nights"][1]["id"])


def test_errors_name_the_input(tmp_path, capsys):
    doc = real()
    del doc["metadata"]["started"]
    (path,) = write_nights(tmp_path, [doc])
    assert cli.main(["history", path, "--site", str(tmp_path / "s")]) == 2
    assert "night-1.json: no metadata.started" in capsys.readouterr().err

    bad = tmp_path / "state.json"
    bad.write_text(json.dumps({"kind": "trend", "points": []}))
    ok = write_nights(tmp_path, [night_doc(real(), datetime.date(2026, 11, 1))])
    assert cli.main(["history", *ok, "--state", str(bad)]) == 2
    assert "not a history state file" in capsys.readouterr().err

    assert cli.main(["history", *ok]) == 2
    assert "nothing to write" in capsys.readouterr().err

    state = history.empty_state()
    for d in range(1, 5):
        _add(state, night_doc(real(), datetime.date(2026, 11, d)))
    history.fold(state, keep_nights=2)
    old = night_doc(real(), datetime.date(2026, 10, 1))
    loaded = history_command.inputs.Loaded("old", old, history_command.inputs.started_of(old))
    with pytest.raises(history.HistoryError, match="older than the oldest night kept in full"):
        history.add_night(state, history_command.nights_of([loaded])[0])

    damaged = copy.deepcopy(state)
    next(iter(next(iter(damaged["cases"].values()))["cells"].values()))["nights"] += "P"
    with pytest.raises(history.HistoryError, match="damaged"):
        history.check_state(damaged, "state.json")


def test_nights_group_files_of_one_run():
    a = night_doc(real(), datetime.date(2026, 11, 1))
    b = copy.deepcopy(a)
    b["metadata"]["os"], b["metadata"]["started"] = "windows", "2026-11-01T05:00:00+00:00"
    c = night_doc(real(), datetime.date(2026, 11, 2))
    loaded = [
        history_command.inputs.Loaded(n, d, history_command.inputs.started_of(d))
        for n, d in (("a", a), ("b", b), ("c", c))
    ]
    nights = history_command.nights_of(loaded)
    assert [n.sources for n in nights] == [["a", "b"], ["c"]]
    state = history.empty_state()
    for n in nights:
        history.add_night(state, n)
    assert set(state["cases"]["onnx-ops/test_ReLU"]["cells"]) == {
        "llvm-cpu linux/x86_64",
        "llvm-cpu windows/x86_64",
        "vulkan linux/x86_64",
        "vulkan windows/x86_64",
    }
    assert (
        state["cases"]["onnx-ops/test_ReLU"]["cells"]["llvm-cpu windows/x86_64"]["nights"] == "P."
    )


def test_verdict_strip_is_runs_of_one_verdict():
    periods = [{"label": "2026-W40", "kind": "week"}, {"label": "2026-W41", "kind": "week"}]
    periods += [{"label": f"2026-10-{d:02d}", "kind": "night"} for d in (12, 13, 14)]
    runs = site._strip(periods, "PPPFF")
    assert [(r["code"], r["x"], r["width"], r["week"]) for r in runs] == [
        ("P", 0, 2, True),
        ("P", 2, 1, False),
        ("F", 3, 2, False),
    ]
    assert runs[0]["title"] == "2026-W40 to 2026-W41 (2): pass (worst of each week)"
    assert runs[2]["title"] == "2026-10-13 to 2026-10-14 (2): fail"


def set_stats(doc: dict[str, Any], case_id: str, dispatches: int, module_bytes: int) -> None:
    for o in doc["outcomes"]:
        if o["case_id"] == case_id and o["target"] == "llvm-cpu":
            stats = {"dispatches": dispatches, "module_bytes": module_bytes, "scope": "case"}
            o.setdefault("metrics", {})["compile_stats"] = stats


def test_compile_statistics_over_time_and_at_each_change_of_version(tmp_path):
    """A case's figures are kept when they change by compare's rules (a module 300 bytes
    bigger is noise); the version step lists the change, the case page each entry."""
    case_id, steady = "onnx-ops/test_ReLU", "onnx-ops/test_abs"
    figures = [(1, 10_000), (1, 10_300), (2, 10_300), (2, 30_000)]
    docs = [
        night_doc(real(), datetime.date(2026, 11, d), v)
        for d, v in ((20, "3.12.0"), (21, "3.12.0"), (22, "3.13.0"), (23, "3.13.0"))
    ]
    for doc, (dispatches, size) in zip(docs, figures):
        set_stats(doc, case_id, dispatches, size)
        set_stats(doc, steady, 1, 5_000)
    state_path, site_dir = tmp_path / "h.json", tmp_path / "site"
    paths = write_nights(tmp_path, docs)
    argv = ["history", *paths, "--state-out", str(state_path), "--site", str(site_dir)]
    assert cli.main([*argv, "--keep-nights", "3"]) == 0
    state = json.loads(state_path.read_text(encoding="utf-8"))
    entries = cell_of(state, case_id)["stats"]
    # the 20th was folded into its week: its entry stays as the one the kept nights start from
    assert [(e[0][:10], e[1], e[2]) for e in entries] == [
        ("2026-11-20", 1, 10_000),
        ("2026-11-22", 2, 10_300),
        ("2026-11-23", 2, 30_000),
    ]
    assert cell_of(state, steady)["stats"] == [[entries[0][0], 1, 5_000, "case"]]
    (step,) = history.version_steps(state)
    assert [(c, k, ch.describe()) for c, k, ch in step.stat_changes] == [
        (case_id, "llvm-cpu linux/x86_64", "dispatches 1 -> 2 (+100.0%)")
    ]
    index = (site_dir / "index.html").read_text(encoding="utf-8")
    section = index.split('id="versions"')[1].split('id="started-failing"')[0]
    assert "Compile statistics changed (1)" in section and "dispatches 1 -&gt; 2" in section
    page = (site_dir / "cases" / f"{site.slug(case_id)}.html").read_text(encoding="utf-8")
    table = page.split('class="compile-stats"')[1].split("</table>")[0]
    assert table.count("<tr><td>") == 3 and "(a folded night)" in table
    assert "module size 10,300 -&gt; 30,000 bytes (+191.3%)" in table


def test_compile_statistics_are_kept_only_when_they_change():
    cell = {"nights": "PPP", "weeks": ""}
    for day, figures in (("2026-11-20", (1, 1_000)), ("2026-11-21", (4, 1_000))):
        history.record_stats(cell, day, {"dispatches": figures[0], "module_bytes": figures[1]})
    history.record_stats(cell, "2026-11-22", {"dispatches": 4, "module_bytes": 1_000})
    assert [e[0] for e in cell["stats"]] == ["2026-11-20", "2026-11-21"]
    assert history.figures_at(cell, "2026-11-22")[1] == 4
    assert history.figures_at(cell, "2026-11-19") is None
