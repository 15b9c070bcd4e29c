"""Seeded random inputs and the onnxruntime reference."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from iree_conformance.frontends.onnx.inputs import (
    InputGenerationError,
    InputSpec,
    random_inputs,
    resolve_shape,
    specs_from_io_ports,
    specs_from_model,
)
from iree_conformance.frontends.onnx.reference import OnnxRuntimeReferenceError, run_onnxruntime
from tests.support.onnx_testlib import add_model


def multi_input_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "idx"], ["out"])],
        "g",
        [
            helper.make_tensor_value_info("table", TensorProto.FLOAT, ["N", 4]),
            helper.make_tensor_value_info("idx", TensorProto.INT64, [3]),
            helper.make_tensor_value_info("flag", TensorProto.BOOL, [5]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("w", TensorProto.FLOAT, [1], [1.0])],
    )
    return helper.make_model(graph)


def test_specs_exclude_initializers() -> None:
    specs = specs_from_model(multi_input_model())
    assert specs == [
        InputSpec("table", ("N", 4), TensorProto.FLOAT),
        InputSpec("idx", (3,), TensorProto.INT64),
        InputSpec("flag", (5,), TensorProto.BOOL),
    ]


def test_values_follow_the_rules() -> None:
    table, idx, flag = random_inputs(specs_from_model(multi_input_model()), seed=7)
    assert table.shape == (1, 4) and table.dtype == np.float32
    assert table.min() >= -1 and table.max() < 1
    assert idx.dtype == np.int64 and idx.min() >= 0 and idx.max() < 10
    assert flag.dtype == np.bool_
    big = random_inputs([InputSpec("b", (1000,), TensorProto.UINT8)])[0]
    assert set(np.unique(big)) == set(range(10))


def test_deterministic_by_seed() -> None:
    specs = specs_from_model(multi_input_model())
    a, b, c = (
        random_inputs(specs, seed=1),
        random_inputs(specs, seed=1),
        random_inputs(specs, seed=2),
    )
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    # An input's values do not depend on the inputs before it (here: a larger first one).
    bigger = [InputSpec("table", (50, 4), TensorProto.FLOAT), *specs[1:]]
    np.testing.assert_array_equal(random_inputs(bigger, seed=1)[1], a[1])


def test_symbolic_dims() -> None:
    spec = InputSpec("x", ("batch", "seq", 3, None), TensorProto.FLOAT)
    assert resolve_shape(spec) == (1, 1, 3, 1)
    assert resolve_shape(spec, {"seq": 128}) == (1, 128, 3, 1)
    assert resolve_shape(spec, default_dim=2) == (2, 2, 3, 2)


def test_specs_from_io_ports() -> None:
    ports = [
        {"name": "ids", "shape": ["unk__1", 256], "type": "tensor(int64)"},
        {"name": "img", "shape": [1, 3, 224, 224], "type": "tensor(float)"},
    ]
    specs = specs_from_io_ports(ports)
    assert specs[0] == InputSpec("ids", ("unk__1", 256), TensorProto.INT64)
    ids, img = random_inputs(specs, dim_sizes={"unk__1": 2})
    assert ids.shape == (2, 256) and img.shape == (1, 3, 224, 224)
    with pytest.raises(InputGenerationError, match=r"'s' has type 'seq\(tensor\(uint8\)\)'"):
        specs_from_io_ports([{"name": "s", "shape": [], "type": "seq(tensor(uint8))"}])
    with pytest.raises(InputGenerationError, match="string tensor"):
        random_inputs(specs_from_io_ports([{"name": "t", "shape": [1], "type": "tensor(string)"}]))


def test_onnxruntime_reference() -> None:
    model = add_model()
    x = np.ones((2, 3), np.float32)
    (y,) = run_onnxruntime(model, [x])
    np.testing.assert_array_equal(y, x + np.arange(3, dtype=np.float32))
    (y2,) = run_onnxruntime(model.SerializeToString(), [x])
    np.testing.assert_array_equal(y, y2)


def test_onnxruntime_reference_errors() -> None:
    with pytest.raises(OnnxRuntimeReferenceError, match=r"has 1 inputs \['x'\] but 2 values"):
        run_onnxruntime(add_model(), [np.ones((2, 3), np.float32)] * 2)
    with pytest.raises(OnnxRuntimeReferenceError, match="cannot load the model"):
        run_onnxruntime(b"not a model", [])
    with pytest.raises(OnnxRuntimeReferenceError, match="failed to run it"):
        run_onnxruntime(add_model(), [np.ones((2, 3), np.int64)])
