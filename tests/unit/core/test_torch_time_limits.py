"""The stage limits apply to a torch case file's import and to a case's export, which run
the case's own Python outside the worker (issue 58, item 6): a ``time.sleep(1e5)`` at
import was a hung collection, one in ``forward`` a hung run."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("torch", reason="the torch suite's tests need torch: pip install torch==2.13.0")
pytest.importorskip("iree.turbine", reason="the torch suite's tests need iree-turbine")

from tests.support.core_helpers import run_conformance_pytest  # noqa: E402

SLOW_IMPORT = """
import time
time.sleep(1e5)
"""
SLOW_FORWARD = '''
import time
import torch
from iree_conformance.frontends.torch_export import case

@case(torch.ones(2))
def sleepy(x):
    """Never returns."""
    time.sleep(1e5)
    return x

@case(torch.arange(4, dtype=torch.float32))
def quick(x):
    """Fine."""
    return x + 1
'''


def test_a_case_file_or_forward_that_hangs_is_stopped_at_the_stage_limit(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "hang_import.py").write_text(SLOW_IMPORT, encoding="utf-8")
    (tmp_path / "mine" / "hang_forward.py").write_text(SLOW_FORWARD, encoding="utf-8")
    start = time.monotonic()
    result = run_conformance_pytest(
        "--torch-dir",
        str(tmp_path / "mine"),
        "-k",
        "torch/ext/",
        "--stage-timeout",
        "prepare=8",
        "--stage-timeout",
        "import=8",
        "--store-dir",
        str(tmp_path / "store"),
        "--report-json",
        str(tmp_path / "results.json"),
        "-n",
        "0",
        suite="torch",
        timeout=300,
    )
    elapsed = time.monotonic() - start
    outcomes = {
        o["case_id"]: o for o in json.loads((tmp_path / "results.json").read_text())["outcomes"]
    }
    hung_import = outcomes["torch/ext/hang_import"]
    assert (hung_import["status"], hung_import["stage"]) == ("error", "prepare")
    assert "ran past its limit of 8 s" in "\n".join(hung_import["diagnostics"])
    sleepy = outcomes["torch/ext/hang_forward/sleepy"]
    assert (sleepy["status"], sleepy["stage"]) == ("timeout", "prepare"), result.stdout[-3000:]
    assert "ran past its limit of 16 s" in "\n".join(sleepy["diagnostics"])
    quick = outcomes["torch/ext/hang_forward/quick"]
    assert quick["status"] == "pass", quick
    assert elapsed < 200  # the two limits and the rest, never the sleeps
