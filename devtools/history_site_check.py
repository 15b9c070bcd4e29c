"""Render the history site from three nights in headless Chromium and check what it shows.

From one real results file (pytest conformance --report-json) this derives three nightly
results files: the run itself moved two days and one day back, and the run as it is;
one case that passes in the run (the first passing llvm-cpu case, by id) is made to
fail on the second and third nights (verdict fail, status fail-numerics, the reason
saying it was derived). `iree-conformance history` turns the three files into the
site; then, in Chromium (`--dump-dom`, `--screenshot`, as devtools/render_html_check.py):

- the index is not blank;
- the search box, filled from `?q=<case id>`, lists the case and links to its page;
- that page names the second night as the one the case started failing;
- the trend chart of the case's suite, target and OS shows three points.

Exit status: 0 when the checks pass, 1 when one fails, 2 when Chromium or an input is
missing.

Example:
  python -m devtools.history_site_check .ci-cache/results.json --work .ci-cache/history
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import re
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any

from ci._common import CIError, load_results, run_main
from devtools import render_html_check as rhc
from iree_conformance.common.vocabulary import Stage, Verdict

NIGHTS = 3
DERIVED_REASON = "derived by devtools/history_site_check.py: made to fail from this night on"


def pick_case(results: dict[str, Any]) -> dict[str, Any]:
    """The first passing llvm-cpu outcome by case id (else any passing one)."""
    passing = [o for o in results["outcomes"] if o.get("verdict") == "pass"]
    if not passing:
        raise CIError("the results file has no passing case to make fail")
    preferred = [o for o in passing if o.get("target") == "llvm-cpu"] or passing
    return min(preferred, key=lambda o: str(o["case_id"]))


def _shift(text: Any, days: int) -> Any:
    if not isinstance(text, str) or not text:
        return text
    value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (value + datetime.timedelta(days=days)).isoformat(timespec="seconds")


def derive_nights(results: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Three results documents, oldest first, and the outcome made to fail from night 2."""
    if not (results.get("metadata") or {}).get("started"):
        raise CIError("the results file has no metadata.started")
    case = pick_case(results)
    nights = []
    for i in range(NIGHTS):
        doc = copy.deepcopy(results)
        meta = doc["metadata"]
        back = i - (NIGHTS - 1)
        meta["started"], meta["finished"] = (
            _shift(meta["started"], back),
            _shift(meta.get("finished"), back),
        )
        if i >= 1:
            for o in doc["outcomes"]:
                if o["case_id"] == case["case_id"] and o.get("target") == case.get("target"):
                    o.update(
                        verdict=Verdict.FAIL,
                        status="fail-numerics",
                        stage=Stage.COMPARE,
                        reason=DERIVED_REASON,
                    )
        nights.append(doc)
    return nights, case


def dump(browser: str, url: str, timeout: float = 120) -> str:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            browser,
            *rhc.chromium_flags("1280,800"),
            f"--user-data-dir={profile}",
            "--dump-dom",
            url,
        ]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout


def search_links(dom: str) -> list[tuple[str, str]]:
    """(href, text) of the links in the search results list."""
    m = re.search(r'<ul id="search-results">(.*?)</ul>', dom, re.S)
    return re.findall(r'<a href="([^"]+)">([^<]*)</a>', m.group(1)) if m else []


def started_failing(dom: str) -> list[str]:
    """The text of each "started failing" paragraph of a case page."""
    return [
        re.sub(r"<[^>]+>", "", t)
        for t in re.findall(r'<p class="started-failing"[^>]*>(.*?)</p>', dom, re.S)
    ]


def trend_points(dom: str, suite: str, cell: str) -> int | None:
    """Pass markers in the trend chart of (suite, cell); None when there is no such chart."""
    for attrs, body in re.findall(r'<svg class="trend"([^>]*)>(.*?)</svg>', dom, re.S):
        if f'data-suite="{suite}"' in attrs and f'data-cell="{cell}"' in attrs:
            return len(re.findall(r'<circle class="pt-pass"', body))
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="history_site_check.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", help="a results JSON file of a real run")
    parser.add_argument(
        "--work", default="history-check", help="folder for the nights and the site"
    )
    parser.add_argument("--browser", help="the browser executable (default: chromium on the PATH)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    nights, case = derive_nights(load_results(Path(args.results)))
    paths = []
    for i, doc in enumerate(nights, 1):
        path = work / f"night-{i}.json"
        path.write_text(json.dumps(doc, indent=1), encoding="utf-8", newline="\n")
        paths.append(str(path))
    site = work / "site"
    state = work / "history.json"
    state.unlink(missing_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "history",
            *paths,
            "--state-out",
            str(state),
            "--site",
            str(site),
        ],
        check=True,
    )
    browser = rhc.find_browser(args.browser)
    index = site / "index.html"
    shot = work / "index.png"
    rhc.screenshot(browser, index, shot, "1280,1600")
    colors, ink = rhc.blank_report(rhc.read_png(shot.read_bytes()))
    case_id = str(case["case_id"])
    cell = f"{case.get('target')} {nights[0]['metadata'].get('os')}/{nights[0]['metadata'].get('arch')}"
    night2 = nights[1]["metadata"]["started"][:10]
    query = index.resolve().as_uri() + "?q=" + urllib.parse.quote(case_id)
    index_dom = dump(browser, query)
    links = [href for href, text in search_links(index_dom) if text == case_id]
    points = trend_points(index_dom, str(case.get("suite")), cell)
    page_text = (
        started_failing(dump(browser, (site / links[0]).resolve().as_uri())) if links else []
    )
    print(f"case {case_id} on {cell}: made to fail from the night of {night2}")
    print(f"index screenshot {shot}: {colors} distinct colours, {100 * ink:.1f} % ink")
    print(f"search for {case_id!r}: {links or 'no link'}")
    print(f"case page, started failing: {page_text or 'nothing'}")
    print(f"trend {case.get('suite')} · {cell}: {points} point(s)")
    problems = []
    if colors < rhc.MIN_COLORS or ink < rhc.MIN_INK:
        problems.append("the index screenshot looks blank")
    if not links:
        problems.append(f"the search did not list {case_id}")
    if not any(night2 in t for t in page_text):
        problems.append(f"the case page does not name {night2} as the night it started failing")
    if points != NIGHTS:
        problems.append(
            f"the trend of {case.get('suite')} on {cell} shows {points} point(s), not {NIGHTS}"
        )
    return rhc.verdict(
        problems, "the history site renders, finds the case and names the night it started failing"
    )


if __name__ == "__main__":
    sys.exit(run_main(main))
