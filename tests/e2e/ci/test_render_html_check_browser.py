"""devtools/render_html_check.py in a real headless browser (skipped without one)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from devtools import render_html_check as check
from iree_conformance.report.html import inputs, render
from tests.support.ci_helpers import RESULTS


@pytest.mark.skipif(
    not any(shutil.which(b) for b in check.BROWSERS), reason="no Chromium installed"
)
def test_real_browser_renders_the_report(tmp_path: Path, capsys):
    page = tmp_path / "report.html"
    page.write_text(
        render.render_html(
            inputs.load([RESULTS / "linux-py3.11-before-manifest.json"]),
            render.Options(generate_ops=False),
        ).html,
        encoding="utf-8",
    )
    assert (
        check.main(
            [str(page), "--screenshot", str(tmp_path / "shot.png"), "--window-size", "1000,700"]
        )
        == 0
    )
    assert "OK: the report renders" in capsys.readouterr().out
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    assert (
        check.main(
            [str(blank), "--screenshot", str(tmp_path / "blank.png"), "--window-size", "400,300"]
        )
        == 1
    )
