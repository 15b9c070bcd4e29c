"""The Markdown report, the HTML report and the CI merge tables agree on every count.

One real conformance run (the bundled StableHLO corpus on llvm-cpu and vmvx, offline, a
private artifact store). Its manifests are vmvx's alone, so llvm-cpu's known failures
come out as unexpected ``fail`` verdicts and vmvx's as ``xfail``: every section has
something in it. The numbers are parsed out of each rendering and checked against each
other and against counts taken straight from the results file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from iree_conformance.report import markdown as report
from iree_conformance.report.html import inputs, render
from iree_conformance.report.model import FUNNEL_STEPS
from tests.support.html_tables import Tables

ROOT = Path(__file__).resolve().parents[3]
TARGETS = ("llvm-cpu", "vmvx")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    """A real run's results file (path and content)."""
    tmp = tmp_path_factory.mktemp("agreement")
    manifests = tmp / "expectations"
    manifests.mkdir()
    shutil.copy(ROOT / "conformance" / "expectations" / "vmvx.toml", manifests)
    path = tmp / "results.json"
    env = {**os.environ, "IREE_CONFORMANCE_STORE": str(tmp / "store")}
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "conformance" / "test_conformance.py"),
            "-m",
            "stablehlo",
            "--offline",
            *(arg for t in TARGETS for arg in ("--target", t)),
            "--expectations-dir",
            str(manifests),
            "--report-json",
            str(path),
            "-p",
            "no:cacheprovider",
            "-q",
            "-n",
            "2",
        ],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert path.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"path": path, "data": report.load_results(path)}


def _table(lines: list[str], header_start: str) -> list[list[str]]:
    """The rows (cells stripped) of the Markdown table whose header starts so."""
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip().strip("*") for c in line.strip("|").split("|")])
    head = [c.strip() for c in lines[start].strip("|").split("|")]
    return [head, *rows]


def _heading_numbers(text: str, title: str) -> tuple[int, ...]:
    """The numbers in the heading "### <title> (...)"; () when the section is absent."""
    m = re.search(rf"^### {re.escape(title)} \(([^)]*)\)", text, re.M)
    return tuple(int(n) for n in re.findall(r"\d+", m.group(1))) if m else ()


def _bullets(text: str, title: str) -> dict[str, int]:
    """ "- name: n" lines under the heading "### <title>"."""
    m = re.search(rf"^### {re.escape(title)}\n\n((?:- .*\n?)*)", text, re.M)
    return {k: int(v) for k, v in re.findall(r"^- (.+): (\d+)$", m.group(1), re.M)} if m else {}


def _markdown_numbers(text: str) -> dict:
    lines = text.splitlines()
    head, *rows = _table(lines, "| suite | target |")
    counts = {
        (r[0], r[1]): {h: int(n) for h, n in zip(head[2:-1], r[2:-1]) if int(n)} for r in rows
    }
    fhead, *frows = _table(lines, "| suite | target | runnable |")
    return {
        "counts": counts,
        "unexpected": _heading_numbers(text, "Unexpected results")[:1],
        "groups": _heading_numbers(text, "Failure groups"),
        "expected": _bullets(text, "Expected failures by stage"),
        "flaky": _heading_numbers(text, "Flaky")[:1],
        "differs": _heading_numbers(text, "Differs across targets"),
        "funnel": {(r[0], r[1]): tuple(int(n) for n in r[2:]) for r in frows},
    }


def _ci_numbers(text: str) -> dict:
    lines = text.splitlines()
    head, *rows = _table(lines, "| OS | Python | Target | Suite |")
    counts: dict[tuple[str, str], Counter] = {}
    for r in rows:
        if r[0] == "total":
            continue
        counts.setdefault((r[3], r[2]), Counter()).update(
            {h: int(n) for h, n in zip(head[4:-1], r[4:-1])}
        )
    fhead, *frows = _table(lines, "| suite | target | runnable |")
    return {
        "counts": {k: {v: n for v, n in c.items() if n} for k, c in counts.items()},
        "unexpected": _heading_numbers(text, "Unexpected results")[:1],
        "groups": _heading_numbers(text, "Failure groups"),
        "expected": _bullets(text, "Expected failures by stage"),
        "flaky": _heading_numbers(text, "Flaky")[:1],
        "differs": _heading_numbers(text, "Differs across targets"),
        "funnel": {(r[0], r[1]): tuple(int(n) for n in r[2:]) for r in frows},
    }


def _html_numbers(html: str) -> dict:
    tables = Tables(html).tables
    head, *rows = tables[render.MATRIX_ID]
    counts: dict[tuple[str, str], Counter] = {}
    for r in rows:
        if r[0] == "total":
            continue
        counts.setdefault((r[0], r[1]), Counter()).update(
            {h: int(n) for h, n in zip(head[3:-2], r[3:-2])}
        )
    groups = tables.get("failure-groups", [[]])[1:]
    m = re.search(
        r"(\d+) failing outcome\(s\) \(expected or not\) in (\d+) group\(s\) by stage and normalized first error line, (\d+) unexpected",
        html,
    )
    assert m and int(m.group(1)) == sum(int(r[1]) for r in groups)  # the text and the table
    assert int(m.group(3)) == sum(int(r[2]) for r in groups)
    funnel: dict[tuple[str, str], list[int]] = {}
    for card in re.findall(r'aria-label="stage funnel of (\S+) on (\S+)">(.*?)</svg>', html, re.S):
        passed = re.findall(r"<title>(\d+) of (\d+)</title>", card[2])
        funnel[(card[0], card[1])] = [int(passed[0][1]), *(int(p) for p, _ in passed)]
    return {
        "counts": {k: {v: n for v, n in c.items() if n} for k, c in counts.items()},
        "unexpected": (len(tables["unexpected-results"]) - 1,)
        if "unexpected-results" in tables
        else (),
        "groups": tuple(int(n) for n in m.groups()),
        "expected": {r[0]: int(r[1]) for r in tables.get("expected-failures", [[]])[1:]},
        "flaky": (len(tables["flaky-cases"]) - 1,) if "flaky-cases" in tables else (),
        "differs": (len(tables["differs-across-targets"]) - 1,)
        if "differs-across-targets" in tables
        else (),
        "funnel": {k: tuple(v) for k, v in funnel.items()},
    }


def test_the_three_renderings_agree_on_a_real_run(results):
    path, data = results["path"], results["data"]
    outcomes = data["outcomes"]
    markdown = _markdown_numbers(report.render_markdown(data))
    from ci import merge_results

    ci = _ci_numbers(merge_results.render_markdown(merge_results.merge([path]), max_listed=10_000))
    page = render.render_html(
        inputs.load([path]),
        render.Options(generate_ops=False, max_groups=10_000, max_listed=10_000),
    )
    html = _html_numbers(page.html)

    # Straight from the results file, not through the model.
    raw_counts: dict[tuple[str, str], Counter] = {}
    for o in outcomes:
        raw_counts.setdefault((o["suite"], o["target"]), Counter())[o["verdict"]] += 1
    failing = [o for o in outcomes if o["status"] not in ("pass", "skip")]
    red = [o for o in outcomes if o["verdict"] in ("fail", "xpass")]
    xfails = Counter(o["expected"] for o in outcomes if o["verdict"] == "xfail")
    assert {k: dict(c) for k, c in raw_counts.items()} == markdown["counts"]
    assert set(TARGETS) <= {t for _, t in raw_counts}
    assert red and xfails and failing, "the run should exercise every section"
    assert markdown["unexpected"] == (len(red),)
    assert markdown["groups"][0] == len(failing) and markdown["groups"][2] == len(red)
    assert markdown["expected"] == dict(xfails)
    assert markdown["differs"] and markdown["differs"][0] > 0
    runnable = Counter((o["suite"], o["target"]) for o in outcomes if o["status"] != "skip")
    passed = Counter((o["suite"], o["target"]) for o in outcomes if o["status"] == "pass")
    for key, row in markdown["funnel"].items():
        assert row[0] == runnable[key] and row[-1] == passed[key]
        assert list(row[1:]) == sorted(row[1:], reverse=True)  # a funnel narrows
    assert set(markdown["funnel"]) == set(runnable)

    assert ci == markdown
    assert html == markdown
    print("agreed on:", markdown)  # the figures, for the record (pytest -s)
    assert len(FUNNEL_STEPS) + 1 == len(next(iter(markdown["funnel"].values())))
