"""Data-set value files: tensors, non-tensor kinds, numbering."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from iree_conformance.frontends.onnx.values import (
    DataSetError,
    UnsupportedValue,
    load_data_set,
    value_kind,
    write_value,
)


def seq_model() -> object:
    seq_type = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    )
    graph = helper.make_graph(
        [helper.make_node("SequenceLength", ["s"], ["n"])],
        "g",
        [helper.make_value_info("s", seq_type)],
        [helper.make_tensor_value_info("n", TensorProto.INT64, [])],
    )
    return helper.make_model(graph)


def test_round_trip_tensor_and_scalar(tmp_path: Path) -> None:
    write_value(tmp_path / "input_0.pb", np.arange(6, dtype=np.int32).reshape(2, 3), None, "a")
    write_value(tmp_path / "input_1.pb", np.float32(2.5), None, "b")  # numpy scalar
    write_value(tmp_path / "output_0.pb", numpy_helper.from_array(np.ones(2, np.float16)), None)
    inputs, outputs = load_data_set(tmp_path)
    np.testing.assert_array_equal(inputs[0], np.arange(6).reshape(2, 3))
    assert inputs[0].dtype == np.int32
    assert inputs[1].shape == () and inputs[1] == 2.5
    assert outputs[0].dtype == np.float16


def test_sequence_value_is_unsupported(tmp_path: Path) -> None:
    model = seq_model()
    write_value(tmp_path / "input_0.pb", [np.ones(2, np.float32)], model.graph.input[0].type, "s")
    write_value(tmp_path / "output_0.pb", np.int64(1), None, "n")
    assert value_kind(model.graph.input[0].type) == "sequence"
    with pytest.raises(UnsupportedValue, match="input 's' is a sequence value"):
        load_data_set(tmp_path, model)


def test_gaps_and_garbage_are_reported(tmp_path: Path) -> None:
    write_value(tmp_path / "input_1.pb", np.ones(1, np.float32), None)
    with pytest.raises(DataSetError, match="not numbered 0..0"):
        load_data_set(tmp_path)
    (tmp_path / "input_1.pb").unlink()
    (tmp_path / "input_0.pb").write_bytes(b"\xff\xff\xff")
    with pytest.raises(DataSetError, match="not a serialized onnx.TensorProto"):
        load_data_set(tmp_path)
    with pytest.raises(DataSetError, match="does not exist"):
        load_data_set(tmp_path / "nope")
