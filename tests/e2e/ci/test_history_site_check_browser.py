"""devtools/history_site_check.py in a real headless browser (skipped without one)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from devtools import history_site_check as check
from devtools import render_html_check as rhc
from tests.support.ci_helpers import RESULTS

REAL = RESULTS / "linux-py3.11.json"


has_browser = pytest.mark.skipif(
    not any(shutil.which(b) for b in rhc.BROWSERS), reason="no Chromium installed"
)


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
