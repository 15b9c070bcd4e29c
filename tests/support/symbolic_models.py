"""Small models with each kind of symbolic dim, for the shape rule and integer roles.

* ``batch_model``: y = x @ W, x [N, 4] (a batch dim);
* ``image_model``: a 3x3 Conv and a global average pool, x [N, 3, H, W];
* ``text_line_model``: like an OCR recognizer: an average pool of 48 rows, then a
  Squeeze of that axis, so that onnxruntime runs it only at a height of 48 (any width);
* ``embedding_model``: token ids [N, T] into a 100x8 embedding table (an index input);
* ``reshape_model``: x reshaped by an int64 input ``shape`` (a shape-feeding input);
* ``scalar_model``: y = x * float(sr) with an int64 scalar ``sr`` (a small scalar);
* ``nan_model``: y = sqrt(-1 - |x|), NaN whatever the inputs (a degenerate reference).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _model(nodes, inputs, outputs, inits=(), name="m", opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _f(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def batch_model() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), "W")
    return _model(
        [helper.make_node("MatMul", ["x", "W"], ["y"])],
        [_f("x", ["N", 4])],
        [_f("y", ["N", 3])],
        [w],
        "batch",
    )


def image_model() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    return _model(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
            helper.make_node("GlobalAveragePool", ["c"], ["y"]),
        ],
        [_f("x", ["N", 3, "H", "W"])],
        [_f("y", ["N", 4, 1, 1])],
        [w],
        "image",
    )


def text_line_model() -> onnx.ModelProto:
    axes = numpy_helper.from_array(np.array([2], dtype=np.int64), "axes")
    return _model(
        [
            helper.make_node("AveragePool", ["x"], ["p"], kernel_shape=[48, 1], strides=[48, 1]),
            helper.make_node("Squeeze", ["p", "axes"], ["y"]),
        ],
        [_f("x", ["batch", 3, "height", "width"])],
        [_f("y", ["batch", 3, "width"])],
        [axes],
        "text_line",
    )


def embedding_model() -> onnx.ModelProto:
    table = numpy_helper.from_array(
        np.arange(800, dtype=np.float32).reshape(100, 8) / 800, "embedding"
    )
    return _model(
        [
            helper.make_node("Gather", ["embedding", "ids"], ["e"], axis=0),
            helper.make_node("ReduceMean", ["e"], ["y"], axes=[1], keepdims=0),
        ],
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "sequence"])],
        [_f("y", ["batch", 8])],
        [table],
        "embedding",
        opset=17,
    )


def reshape_model() -> onnx.ModelProto:
    return _model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        [_f("x", [2, 6]), helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [_f("y", [None, None])],
        name="reshape",
    )


def scalar_model() -> onnx.ModelProto:
    return _model(
        [
            helper.make_node("Cast", ["sr"], ["srf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["x", "srf"], ["y"]),
        ],
        [_f("x", ["N", 16]), helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [_f("y", ["N", 16])],
        name="scalar",
    )


def nan_model() -> onnx.ModelProto:
    one = numpy_helper.from_array(np.array(-1.0, dtype=np.float32), "minus_one")
    return _model(
        [
            helper.make_node("Abs", ["x"], ["a"]),
            helper.make_node("Sub", ["minus_one", "a"], ["s"]),
            helper.make_node("Sqrt", ["s"], ["y"]),
        ],
        [_f("x", ["N", 4])],
        [_f("y", ["N", 4])],
        [one],
        "nan",
    )


def symbolic_channels_model() -> onnx.ModelProto:
    """A vision export whose channel dim is symbolic: x [batch, num_channels, h, w],
    normalized (Sub) and fed to a 3-channel Conv."""
    rng = np.random.default_rng(2)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    half = numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")
    return _model(
        [
            helper.make_node("Sub", ["x", "half"], ["n"]),
            helper.make_node("Conv", ["n", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
            helper.make_node("GlobalAveragePool", ["c"], ["y"]),
        ],
        [_f("x", ["batch", "num_channels", "height", "width"])],
        [_f("y", ["batch", 4, 1, 1])],
        [w, half],
        "channels",
    )


def positions_model(positions: int = 77) -> onnx.ModelProto:
    """A CLIP-style text encoder's embeddings: token ids [batch, sequence] into a 100x8
    table, plus position embeddings (``positions`` x 8) gathered by Range(sequence), and an
    int64 ``attention_mask`` multiplied in."""
    rng = np.random.default_rng(3)
    tokens = numpy_helper.from_array(rng.standard_normal((100, 8)).astype(np.float32), "tokens")
    pos = numpy_helper.from_array(
        rng.standard_normal((positions, 8)).astype(np.float32), "position_embedding"
    )
    consts = [
        numpy_helper.from_array(np.array(v, dtype=np.int64), n)
        for n, v in (("zero", 0), ("one", 1), ("one_axis", [1]))
    ]
    return _model(
        [
            helper.make_node("Shape", ["ids"], ["shape"]),
            helper.make_node("Gather", ["shape", "one"], ["length"], axis=0),
            helper.make_node("Range", ["zero", "length", "one"], ["positions"]),
            helper.make_node("Gather", ["position_embedding", "positions"], ["p"], axis=0),
            helper.make_node("Gather", ["tokens", "ids"], ["t"], axis=0),
            helper.make_node("Add", ["t", "p"], ["e"]),
            helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", ["m", "minus_one"], ["m3"]),
            helper.make_node("Mul", ["e", "m3"], ["y"]),
        ],
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info(
                "attention_mask", TensorProto.INT64, ["batch", "sequence"]
            ),
        ],
        [_f("y", ["batch", "sequence", 8])],
        [
            tokens,
            pos,
            *consts,
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus_one"),
        ],
        "positions",
    )


def annotated_export_model() -> onnx.ModelProto:
    """Like a dynamo export: x [N, 4] reshaped to 1x1x1x4, Relu, Neg, with the exporter's
    looser annotation ``[?, 1, 1, ?]`` on the Relu's output in ``value_info`` (shape
    inference says 1x1x1x4). As a graph output that annotation is a type IREE's importer
    rejects ("type of return operand ... doesn't match function result type")."""
    shape = numpy_helper.from_array(np.array([1, 1, 1, 4], dtype=np.int64), "s")
    graph = helper.make_graph(
        [
            helper.make_node("Reshape", ["x", "s"], ["r"]),
            helper.make_node("Relu", ["r"], ["q"]),
            helper.make_node("Neg", ["q"], ["y"]),
        ],
        "annotated",
        [_f("x", ["N", 4])],
        [_f("y", ["?", 1, 1, 4])],
        [shape],
        value_info=[_f("q", ["?", 1, 1, "?"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def legacy_greater_or_equal_model(opset: int = 14) -> onnx.ModelProto:
    """Like a legacy (opset 14) BERT-style export's mask arithmetic: y = float(x >= 0).
    IREE's tools at their defaults fail it (onnx.GreaterOrEqual below opset 16 is not
    legalized); upgraded to opset 17, as IREE's documented flow imports, it passes."""
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    return _model(
        [
            helper.make_node("GreaterOrEqual", ["x", "zero"], ["b"]),
            helper.make_node("Cast", ["b"], ["y"], to=TensorProto.FLOAT),
        ],
        [_f("x", [2, 3])],
        [_f("y", [2, 3])],
        [zero],
        "legacy_ge",
        opset=opset,
    )


def dropout_model(training: bool, ratio: float = 0.1) -> onnx.ModelProto:
    """y = Dropout(x, ratio, training_mode), both constants, as torch.onnx.export(...,
    dynamo=True) writes a module left in training mode (training=True)."""
    ratio_t = numpy_helper.from_array(np.array(ratio, np.float32), "ratio")
    mode = numpy_helper.from_array(np.array(training), "mode")
    return _model(
        [helper.make_node("Dropout", ["x", "ratio", "mode"], ["y"], name="drop")],
        [_f("x", ["N", 64])],
        [_f("y", ["N", 64])],
        [ratio_t, mode],
        "dropout",
    )
