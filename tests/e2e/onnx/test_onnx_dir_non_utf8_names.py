"""A model file named with bytes that are not UTF-8 under ``--onnx-dir`` (issue 58 item 7):
it gets IREE's verdict (onnxruntime is handed a path it accepts), and the results file,
the reports, the history and the manifests name it as ``\\xff``, never a lone surrogate
that no UTF-8 writer can encode."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from iree_conformance.cli.main import main
from iree_conformance.frontends.onnx.reference import run_onnxruntime
from iree_conformance.model.outcome import Outcome
from tests.support.onnx_testlib import run_conformance

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX file names are bytes")
NAME = b"m\xff.onnx"


def _relu(external: bool = False) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    w = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    nodes = [helper.make_node("Add", ["x", "w"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y], [w]), opset_imports=[helper.make_opsetid("", 17)]
    )
    if external:
        onnx.external_data_helper.convert_model_to_external_data(
            model, location="w.bin", size_threshold=0
        )
    return model


def _write(folder: Path, model: onnx.ModelProto) -> str:
    path = os.path.join(os.fsencode(folder), NAME)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return os.fsdecode(path)


@pytest.mark.parametrize("external", [False, True], ids=["inline", "external-data"])
def test_onnxruntime_runs_a_model_whose_name_is_not_utf8(tmp_path, external):
    model = _relu(external)
    if external:  # the weights file beside the model, as onnx.save writes it
        onnx.save(model, tmp_path / "ok.onnx")  # writes w.bin
        model = onnx.load(tmp_path / "ok.onnx", load_external_data=False)
    path = _write(tmp_path, model)
    (out,) = run_onnxruntime(path, [np.array([-5, 0, 1, 2], np.float32)])
    assert out.tolist() == [0.0, 1.0, 3.0, 5.0]


def test_a_run_over_such_a_file_passes_and_every_reader_takes_its_results(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    _write(models, _relu())
    proc, outcomes = run_conformance(
        tmp_path,
        {"IREE_CONFORMANCE_STORE": str(tmp_path / "store")},
        "onnx_dir",
        "--onnx-dir",
        str(models),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert outcomes["onnx-dir/m\\xff.onnx"]["status"] == "pass"
    results = tmp_path / "results.json"
    assert "\\udc" not in results.read_text(encoding="utf-8")
    _every_reader(results, tmp_path)


def test_an_older_results_file_holding_a_lone_surrogate_is_read(tmp_path):
    """Results written before the fix hold ``\\udcff``: every reader writes it out."""
    outcome = Outcome(
        "onnx-dir/m.onnx", "onnx_dir", "llvm-cpu", stage="reference", status="error"
    ).to_json()
    outcome.update(verdict="fail", case_id="onnx-dir/m\udcff.onnx")
    outcome["diagnostics"] = ["/x/m\udcff.onnx: onnxruntime cannot load the model"]
    results = tmp_path / "old.json"
    results.write_text(
        json.dumps(
            {"schema": 1, "metadata": {"started": "2026-12-07T10:00:00"}, "outcomes": [outcome]}
        )
    )
    _every_reader(results, tmp_path)
    manifest = (tmp_path / "exp" / "llvm-cpu.toml").read_text(encoding="utf-8")
    assert r'"onnx-dir/m\\xff.onnx" = { expect = "fail-reference"' in manifest  # TOML escapes


def _every_reader(results: Path, tmp: Path) -> None:
    for argv in (
        ["report", str(results)],
        ["report", "--html", str(tmp / "r.html"), str(results)],
        ["history", str(results), "--state-out", str(tmp / "s.json"), "--site", str(tmp / "site")],
        ["update-expectations", str(results), "--expectations-dir", str(tmp / "exp")],
    ):
        assert main(argv) == 0, argv
