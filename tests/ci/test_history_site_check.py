"""devtools/history_site_check.py: the three derived nights, the DOM probes, and (where
Chromium is installed) the real headless check of a site made from a real run, passing
and failing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ci_helpers import RESULTS

from devtools import history_site_check as check
from devtools import render_html_check as rhc

REAL = RESULTS / "linux-py3.11.json"
has_browser = pytest.mark.skipif(
    not any(shutil.which(b) for b in rhc.BROWSERS), reason="no Chromium installed"
)


def test_three_nights_one_case_failing_from_the_second():
    real = json.loads(REAL.read_text(encoding="utf-8"))
    nights, case = check.derive_nights(real)
    assert [n["metadata"]["started"][:10] for n in nights] == [
        "2026-11-28",
        "2026-11-29",
        "2026-11-30",
    ]
    assert case["verdict"] == "pass" and case["target"] == "llvm-cpu"
    verdicts = [
        next(
            o["verdict"]
            for o in n["outcomes"]
            if o["case_id"] == case["case_id"] and o["target"] == "llvm-cpu"
        )
        for n in nights
    ]
    assert verdicts == ["pass", "fail", "fail"]
    # Everything else is the real run, untouched.
    others = lambda n: [o for o in n["outcomes"] if o["case_id"] != case["case_id"]]  # noqa: E731
    assert others(nights[0]) == others(nights[2]) == others(real)


def test_dom_probes():
    dom = (
        '<ul id="search-results"><li><a href="cases/a-1.html">a</a> (failing)</li></ul>'
        '<svg class="trend" data-suite="s" data-cell="t linux/x86_64" data-points="2">'
        '<circle class="pt-pass"/><circle class="pt-pass"/><circle class="pt-total"/></svg>'
        '<p class="started-failing" data-cell="t">Failing since the night of <strong>2026-11-29</strong></p>'
    )
    assert check.search_links(dom) == [("cases/a-1.html", "a")]
    assert check.trend_points(dom, "s", "t linux/x86_64") == 2
    assert check.trend_points(dom, "s", "other") is None
    assert check.started_failing(dom) == ["Failing since the night of 2026-11-29"]


@has_browser
def test_real_browser_history_site(tmp_path: Path, capsys):
    assert check.main([str(REAL), "--work", str(tmp_path / "w")]) == 0
    out = capsys.readouterr().out
    assert "OK: the history site renders" in out and "3 point(s)" in out


@has_browser
def test_real_browser_check_fails_when_the_case_never_fails(tmp_path: Path, monkeypatch, capsys):
    derive = check.derive_nights

    def unchanged(results):
        nights, case = derive(results)
        return [json.loads(json.dumps(results)) | {"metadata": n["metadata"]} for n in nights], case

    monkeypatch.setattr(check, "derive_nights", unchanged)
    assert check.main([str(REAL), "--work", str(tmp_path / "w")]) == 1
    assert "does not name 2026-11-29 as the night it started failing" in capsys.readouterr().err
