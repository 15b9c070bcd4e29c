"""Bad input to check-model and reduce gets the documented status, not 1 (the code of an
IREE failure): external data outside the model's folder, a static input too large to
draw, a model onnxruntime cannot load (issue 58 item 10)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from iree_conformance.cli.main import main


def _model_with_external_data(folder: Path, location: str) -> Path:
    weight = numpy_helper.from_array(np.ones(4, np.float32), "w")
    weight.data_location = TensorProto.EXTERNAL
    weight.ClearField("raw_data")
    weight.external_data.add(key="location", value=location)
    weight.external_data.add(key="length", value="16")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [weight],
    )
    path = folder / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("where", ["../../etc/passwd", "/etc/passwd", "link"])
def test_external_data_outside_the_folder_is_exit_2(where, tmp_path, capsys):
    folder = tmp_path / "m"
    folder.mkdir()
    if where == "link":
        os.symlink("/etc/passwd", folder / "link")
    path = _model_with_external_data(folder, where)
    assert main(["check-model", str(path), "--store-dir", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err
    assert "beside the model" in err and len(err.strip().splitlines()) == 1, err


def test_a_static_input_too_large_to_draw_is_exit_2(tmp_path, capsys):
    shape = [100000, 100000, 100000]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    path = tmp_path / "huge.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert main(["check-model", str(path), "--store-dir", str(tmp_path / "store")]) == 2
    assert "(the model's own shape)" in capsys.readouterr().err


def test_reduce_on_a_model_onnxruntime_cannot_load_is_exit_9(tmp_path, capsys):
    graph = helper.make_graph(
        [helper.make_node("NoSuchOp", ["x"], ["y"], domain="bogus.domain")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("bogus.domain", 1)]
    path = tmp_path / "noort.onnx"
    onnx.save(helper.make_model(graph, opset_imports=opsets), path)
    argv = ["reduce", str(path), "--store-dir", str(tmp_path / "store"), "-o", str(tmp_path)]
    assert main(argv) == 9
    assert "not judged: skip" in capsys.readouterr().out
