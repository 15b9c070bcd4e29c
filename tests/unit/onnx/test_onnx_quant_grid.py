"""Which tensors of a graph come out of quantized arithmetic (onnx.quant_grid), and the
bisection judging intermediate tensors by the final comparison's rule."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from iree_conformance.frontends.onnx.bisect import bisect, onnxruntime_runner
from iree_conformance.frontends.onnx.quant_grid import output_grids, tensor_grids
from iree_conformance.model.quantization import Elementwise

SCALE = float(np.float32(0.05))


def _model(nodes, outputs, inits=(), opset=17):
    graph = helper.make_graph(
        nodes,
        "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        outputs,
        initializer=[
            numpy_helper.from_array(np.array(SCALE, np.float32), "s"),
            numpy_helper.from_array(np.array(128, np.uint8), "z"),
            *inits,
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _out(name, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, [1, 64])


def quantized_sigmoid() -> onnx.ModelProto:
    """x -> QuantizeLinear (uint8) -> DequantizeLinear -> Sigmoid, plus the uint8 tensor."""
    return _model(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="quant"),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"], name="dequant"),
            helper.make_node("Mul", ["dq", "two"], ["dq2"], name="double"),
            helper.make_node("Sigmoid", ["dq2"], ["y"], name="sigmoid"),
        ],
        [_out("y"), _out("q", TensorProto.UINT8)],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two")],
    )


def test_grids_follow_dequantize_scaling_and_sigmoid():
    grids = tensor_grids(quantized_sigmoid())
    assert grids["q"].step == 1.0 and "QuantizeLinear" in grids["q"].source
    assert grids["dq"].step == SCALE and grids["dq"].chain == ()
    assert grids["dq2"].step == 2 * SCALE  # a constant scale widens the step
    assert grids["y"].chain == (Elementwise("Sigmoid"),) and grids["y"].step == 2 * SCALE
    assert output_grids(quantized_sigmoid()) == (grids["y"], grids["q"])


def test_a_float_op_on_dequantized_values_ends_the_grid():
    w = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
    model = _model(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"]),
            helper.make_node("MatMul", ["dq", "w"], ["mm"]),
            helper.make_node("Relu", ["mm"], ["y"]),
            helper.make_node("Softmax", ["dq"], ["sm"]),
        ],
        [_out("y"), _out("sm")],
        [w],
    )
    assert output_grids(model) == (None, None)
    plain = _model([helper.make_node("Sigmoid", ["x"], ["y"])], [_out("y")])
    assert output_grids(plain) == (None,)


def test_a_run_time_scale_starts_no_grid():
    model = _model(
        [
            helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "qs", "qz"]),
            helper.make_node("DequantizeLinear", ["q", "qs", "qz"], ["y"]),
        ],
        [_out("y")],
    )
    grids = tensor_grids(model)
    assert "q" in grids and "qs" not in grids and "y" not in grids


def test_per_axis_scale_takes_the_widest_step_and_clip_reads_its_bounds():
    scales = numpy_helper.from_array(np.array([0.01, 0.04], np.float32), "ps")
    zps = numpy_helper.from_array(np.zeros(2, np.int8), "pz")
    lo = numpy_helper.from_array(np.array(0.0, np.float32), "lo")
    hi = numpy_helper.from_array(np.array(6.0, np.float32), "hi")
    graph = helper.make_graph(
        [
            helper.make_node("DequantizeLinear", ["w", "ps", "pz"], ["dq"], axis=0),
            helper.make_node("Clip", ["dq", "lo", "hi"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("w", TensorProto.INT8, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[scales, zps, lo, hi],
    )
    (grid,) = output_grids(helper.make_model(graph))
    assert grid.step == np.float32(0.04) and grid.chain == (Elementwise("Clip", (0.0, 6.0)),)


def _candidate_like_iree(shift_steps: int = 0):
    """onnxruntime's results, uint8 handed back as int8 (as IREE's runtime does), and
    the dequantized tensor moved by shift_steps quantization steps."""

    def run(model, inputs):
        values = onnxruntime_runner(model, inputs)
        out = {}
        for name, v in values.items():
            if v.dtype == np.uint8:
                out[name] = v.view(np.int8)
            elif name == "dq":
                out[name] = (v + shift_steps * SCALE).astype(np.float32)
            elif name in ("dq2", "y"):
                dq2 = (values["dq"] + shift_steps * SCALE) * 2
                out[name] = dq2 if name == "dq2" else (1 / (1 + np.exp(-dq2))).astype(np.float32)
            else:
                out[name] = v
        return out

    return run


def test_bisection_on_a_uint8_output_blames_no_node():
    model = quantized_sigmoid()
    x = np.linspace(-6, 6, 64, dtype=np.float32).reshape(1, 64)
    values = onnxruntime_runner(model, [x])
    assert (values["q"] > 127).any()  # the bits differ in sign as int8
    report = bisect(model, [x], _candidate_like_iree(), rtol=1e-3, atol=1e-4)
    assert report.first is None, report.summary()
    assert report.compared == 4


def test_bisection_judges_quantized_intermediates_by_their_grid():
    model = quantized_sigmoid()
    x = np.linspace(-6, 6, 64, dtype=np.float32).reshape(1, 64)
    run = _candidate_like_iree(shift_steps=1)
    strict = bisect(model, [x], run, rtol=1e-3, atol=1e-4)
    assert strict.first is not None and strict.first.op_type == "DequantizeLinear"
    graded = bisect(model, [x], run, rtol=1e-3, atol=1e-4, grids=tensor_grids(model))
    assert graded.first is None, graded.summary()
    far = bisect(
        model, [x], _candidate_like_iree(3), rtol=1e-3, atol=1e-4, grids=tensor_grids(model)
    )
    assert far.first is not None and far.first.op_type == "DequantizeLinear"


def test_a_model_case_judges_its_quantized_outputs_by_their_grids(tmp_path):
    from iree_conformance.suites.onnx_dir import model_cases

    path = tmp_path / "q.onnx"
    onnx.save(quantized_sigmoid(), path)
    (case,) = model_cases(path, tmp_path)
    (tol,) = case.set_tolerances(1)
    assert tol.grids == output_grids(quantized_sigmoid())
    assert tol.rtol == case.tolerance.rtol and tol.atol == case.tolerance.atol
    plain = tmp_path / "plain.onnx"
    onnx.save(_model([helper.make_node("Relu", ["x"], ["y"])], [_out("y")]), plain)
    (other,) = model_cases(plain, tmp_path)
    assert other.set_tolerances(2) == [other.tolerance] * 2


def test_weights_in_external_data_are_not_read(tmp_path):
    from iree_conformance.suites.model_case import load_model_header

    model = quantized_sigmoid()
    w = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
    model.graph.initializer.append(w)
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, size_threshold=1024)
    header = load_model_header(tmp_path / "m.onnx")
    assert output_grids(header) == output_grids(quantized_sigmoid())
