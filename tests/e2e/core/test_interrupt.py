"""Ctrl-C during check-model or reduce (issue 58 item 9): was a KeyboardInterrupt
traceback and an exit about 5 s later (the parent waited for a worker that had been
interrupted too), with the worker's temporary folder left behind. Now: "interrupted",
exit 130, at once, nothing left in the temp folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGINT to a process group")
ROOT = Path(__file__).resolve().parents[3]


def _model(path: Path) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])
    nodes = [helper.make_node("MatMul", ["x", "x"], ["y"])]
    graph = helper.make_graph(nodes, "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest.mark.parametrize("command", ["check-model", "reduce"])
def test_ctrl_c_is_exit_130_at_once_and_leaves_nothing(command, tmp_path):
    model = tmp_path / "m.onnx"
    _model(model)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "iree_conformance.cli.main", command, str(model), "--no-cache"]
        + (["-o", str(tmp_path / "out")] if command == "reduce" else []),
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: SIGINT to it all, as a terminal sends it
    )
    assert proc.stdout is not None
    proc.stdout.readline()  # "m.onnx on llvm-cpu": the worker is starting
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    start = time.monotonic()
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert time.monotonic() - start < 3.0
    assert "Traceback" not in err and "interrupted" in err, err
    # ours only: a library writes a ".ses" file there on every run, interrupted or not
    assert [p.name for p in tmp.iterdir() if p.name.startswith("iree-conformance")] == []
