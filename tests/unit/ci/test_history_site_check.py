"""devtools/history_site_check.py: the three derived nights and the DOM probes (the real
headless check is in tests/e2e/ci/test_history_site_check_browser.py)."""

from __future__ import annotations

import json

from devtools import history_site_check as check
from tests.support.ci_helpers import RESULTS

REAL = RESULTS / "linux-py3.11.json"


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
