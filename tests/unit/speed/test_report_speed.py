"""The reports' speed table: Markdown and the sortable HTML table."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from iree_conformance.cli.main import main
from iree_conformance.report.markdown import render_markdown
from iree_conformance.report.speed import speed_rows


def _timed(case_id, iree, ref=None, memory=300 << 20):
    bench = {
        "iree": {"samples_s": iree},
        "memory": {"rss_growth_bytes": memory, "rss_growth_how": "VmHWM over the calls"},
        "compile": {"cpu_s": 1.5, "module_bytes": 4096},
    }
    if ref:
        bench["reference"] = {"name": "onnxruntime", "interleaved": True, "samples_s": ref}
    else:
        bench["reference_missing"] = "XLA is not timed for JAX cases yet: IREE's figures alone"
    return {
        "case_id": case_id,
        "suite": "onnx_models",
        "target": "llvm-cpu",
        "status": "pass",
        "verdict": "pass",
        "stage": "compare",
        "duration": 1.0,
        "stage_times": {},
        "info": {},
        "diagnostics": [],
        "metrics": {"timing": {"iree_median_s": iree[0]}, "benchmark": bench},
    }


def _document():
    return {
        "schema": 1,
        "metadata": {"started": "2026-12-02T10:00:00+00:00"},
        "outcomes": [
            _timed("slow", [4e-3, 4e-3, 4e-3], [1e-3, 1e-3, 1e-3]),
            _timed("fast", [1e-3, 1e-3, 2e-3], [1e-3, 1e-3, 1e-3]),
            _timed("alone", [5e-6, 5e-6, 5e-6]),
        ],
    }


def test_rows_highest_ratio_first_and_missing_reference_last():
    rows = speed_rows(_document()["outcomes"])
    assert [r.case_id for r in rows] == ["slow", "fast", "alone"]
    assert rows[0].ratio == pytest.approx(4.0) and rows[2].ratio is None
    assert "IREE's figures alone" in rows[2].note


def test_markdown_has_the_speed_table():
    text = render_markdown(_document())
    assert "### Speed and memory (informative, not pass/fail)" in text
    assert (
        "| `slow` | llvm-cpu | 4.00 ms | 1.00 ms (onnxruntime) | 4.00x | 4.00 ms | 300.0 MiB | 1.50 |"
        in text
    )
    assert "| `alone` | llvm-cpu | 5.00 μs | - (XLA is not timed" in text
    assert "### Timing (informative" not in text  # the old medians table gives way


def test_html_table_sorts_in_chromium(tmp_path):
    browser = shutil.which("chromium")
    if browser is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    results = tmp_path / "r.json"
    results.write_text(json.dumps(_document()))
    page = tmp_path / "r.html"
    assert (
        main(
            [
                "report",
                str(results),
                "--html",
                str(page),
                "--no-step-summary",
                "-o",
                str(tmp_path / "r.md"),
            ]
        )
        == 0
    )
    html = page.read_text()
    assert 'id="speed-table" class="sortable"' in html
    # click the "IREE median" header once: ascending
    clicked = tmp_path / "clicked.html"
    clicked.write_text(
        html.replace(
            "</body>",
            '<script>document.querySelectorAll("#speed-table th")[2].click()</script></body>',
        )
    )
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", clicked.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    body = dom[dom.index('id="speed-table"') :]
    order = [name for name in ("alone", "fast", "slow") if f'data-v="{name}"' in body]
    assert sorted(order, key=lambda n: body.index(f'data-v="{n}"')) == ["alone", "fast", "slow"]


def test_history_site_shows_three_nights_of_speed_trends(tmp_path):
    files = []
    for day, factor in (("2026-11-30", 1.0), ("2026-12-01", 1.5), ("2026-12-02", 2.0)):
        doc = _document()
        doc["metadata"] = {"started": f"{day}T02:00:00+00:00", "iree_compiler": "3.13.0"}
        for o in doc["outcomes"]:
            bench = o["metrics"]["benchmark"]
            bench["iree"]["samples_s"] = [x * factor for x in bench["iree"]["samples_s"]]
        path = tmp_path / f"{day}.json"
        path.write_text(json.dumps(doc))
        files.append(str(path))
    site, state = tmp_path / "site", tmp_path / "state.json"
    assert main(["history", *files, "--state", str(state), "--site", str(site)]) == 0
    cell = next(iter(json.loads(state.read_text())["cases"]["slow"]["cells"].values()))
    assert [p["ratio"] for p in cell["speed"].values()] == pytest.approx([4.0, 6.0, 8.0])
    page = next((site / "cases").glob("slow-*.html")).read_text()
    for series in ("trend-ratio", "trend-compile_cpu_s", "trend-rss_growth_bytes"):
        assert f'class="{series}"' in page
    ratio_chart = page[page.index('class="trend-ratio"') :].split("</svg>")[0]
    assert ratio_chart.count("<circle") == 3 and "8 x" in ratio_chart
    alone = next((site / "cases").glob("alone-*.html")).read_text()
    assert "trend-ratio" not in alone and "trend-compile_cpu_s" in alone  # no reference: no ratio
