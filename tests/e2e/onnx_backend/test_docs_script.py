"""The five-line script of docs/onnx-backend.md, run as written on a model the onnx wheel
ships (pytorch-converted/test_Conv2d, opset 6: the prepare stage upgrades it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "onnx-backend.md"


def _script() -> str:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- five-line-script -->\n```python\n(.*?)```", text, re.S)
    assert found, "docs/onnx-backend.md lost its five-line script"
    return found.group(1)


def test_the_five_line_script_runs_as_the_docs_show(tmp_path):
    import onnx.backend.test

    script = _script()
    assert len([line for line in script.splitlines() if line.strip()]) == 5
    data = Path(onnx.backend.test.__file__).parent / "data" / "pytorch-converted" / "test_Conv2d"
    shutil.copy(data / "model.onnx", tmp_path / "model.onnx")
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )
    assert run.returncode == 0, run.stderr[-3000:]


def test_the_script_would_catch_a_difference(tmp_path):
    """The comparison is real: the same script against a wrong answer fails."""
    script = _script().replace(
        'ort.prepare(model, "CPU").run([x])', 'ort.prepare(model, "CPU").run([x + 1])'
    )
    assert script != _script()
    data = Path(__import__("onnx.backend.test").backend.test.__file__).parent / "data"
    shutil.copy(data / "pytorch-converted" / "test_Conv2d" / "model.onnx", tmp_path / "model.onnx")
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert run.returncode != 0 and "Not equal to tolerance" in run.stderr
