"""Which tensors of an ONNX graph come out of quantized arithmetic, and on what grid.

Walks the top-level graph in topological order. A grid starts at an op whose output is
a scale times an integer: ``DequantizeLinear`` (step: its scale, the largest of a
per-axis scale), the integer outputs of ``QuantizeLinear``, ``DynamicQuantizeLinear``,
``QLinear*``, ``MatMulInteger``, ``ConvInteger`` (step 1) and ``QGemm`` (step 1, or
``a_scale * b_scale`` where it returns floats). It follows the values through

* data-movement ops, which keep every value as it is (Reshape, Transpose, Slice, ...);
* monotonic element-wise ops (Sigmoid, Relu, Clip, Tanh, ...: ``model.quantization``);
* Mul/Div by a constant (the step scales) and Add/Sub of a constant (the step stays);
* while nothing nonlinear came yet, max and average pooling (each output is a max or a
  mean of grid values, so it moves no more than they do).

Anything else (a Conv on dequantized values, a Softmax, an op whose scale is computed
at run time) ends the grid: such a tensor is judged with the strict float tolerance.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
import onnx.numpy_helper

from iree_conformance.frontends.onnx.bisect import topological_order
from iree_conformance.model.quantization import Elementwise, QuantGrid

__all__ = ["output_grids", "tensor_grids"]

_INTEGER_SOURCES = {
    "QuantizeLinear",
    "DynamicQuantizeLinear",
    "QLinearConv",
    "QLinearMatMul",
    "QLinearAdd",
    "QLinearMul",
    "QLinearSigmoid",
    "QLinearLeakyRelu",
    "QLinearAveragePool",
    "QLinearGlobalAveragePool",
    "QLinearConcat",
    "QLinearSoftmax",
    "QLinearReduceMean",
    "MatMulInteger",
    "ConvInteger",
}
# Ops that move, pick or copy values without changing one: the grid passes as it is.
_DATA_MOVEMENT = {
    "Identity",
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Slice",
    "Gather",
    "GatherElements",
    "Expand",
    "Tile",
    "Split",
    "DepthToSpace",
    "SpaceToDepth",
    "Cast",
}
# Max and mean of grid values move no more than the values do (before any nonlinear op).
_POOLING = {"MaxPool", "GlobalMaxPool", "AveragePool", "GlobalAveragePool", "ReduceMax"}


def _constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    from onnx.external_data_helper import uses_external_data

    # Weights kept in external data files are not loaded here (nor needed: scales,
    # zero points and small constants are stored inline).
    found = {
        t.name: onnx.numpy_helper.to_array(t)
        for t in model.graph.initializer
        if not uses_external_data(t) or t.HasField("raw_data")
    }
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value":
                    found[node.output[0]] = onnx.numpy_helper.to_array(attr.t)
                elif attr.name in ("value_float", "value_int"):
                    found[node.output[0]] = np.asarray(onnx.helper.get_attribute_value(attr))
    return found


def _attr(node: onnx.NodeProto, name: str, default: float) -> float:
    for attr in node.attribute:
        if attr.name == name:
            return float(onnx.helper.get_attribute_value(attr))
    return default


def _max_abs(value: np.ndarray | None) -> float | None:
    if value is None or value.size == 0 or not np.issubdtype(value.dtype, np.number):
        return None
    biggest = float(np.max(np.abs(value.astype(np.float64))))
    return biggest if np.isfinite(biggest) and biggest > 0 else None


def _elementwise(node: onnx.NodeProto, consts: Mapping[str, np.ndarray]) -> Elementwise | None:
    op = node.op_type
    if op in ("Sigmoid", "Tanh", "Relu", "Exp", "Softplus", "Neg"):
        return Elementwise(op)
    if op == "LeakyRelu":
        return Elementwise(op, (_attr(node, "alpha", 0.01),))
    if op == "HardSigmoid":
        return Elementwise(op, (_attr(node, "alpha", 0.2), _attr(node, "beta", 0.5)))
    if op == "Clip":
        lo, hi = _attr(node, "min", -np.inf), _attr(node, "max", np.inf)
        for i, bound in ((1, "lo"), (2, "hi")):
            if len(node.input) > i and node.input[i]:
                value = consts.get(node.input[i])
                if value is None or value.size != 1:
                    return None
                if bound == "lo":
                    lo = float(value.reshape(()))
                else:
                    hi = float(value.reshape(()))
        return Elementwise(op, (lo, hi))
    return None


def _name(node: onnx.NodeProto) -> str:
    return f"{node.op_type} {node.name or node.output[0]!r}"


def _source(node: onnx.NodeProto, consts: Mapping[str, np.ndarray]) -> QuantGrid | None:
    """The grid an op starts, if it is one that puts values on a grid."""
    op = node.op_type
    if op == "DequantizeLinear":
        step = _max_abs(consts.get(node.input[1])) if len(node.input) > 1 else None
        return QuantGrid(step, source=f"{_name(node)}, scale") if step else None
    if op == "QGemm":  # com.microsoft: y_scale (input 6) given -> quantized output
        if len(node.input) > 6 and node.input[6]:
            return QuantGrid(1.0, source=_name(node))
        a, b = (_max_abs(consts.get(node.input[i])) for i in (1, 4))
        alpha = abs(_attr(node, "alpha", 1.0))
        return QuantGrid(a * b * alpha, source=_name(node)) if a and b else None
    if op in _INTEGER_SOURCES:
        return QuantGrid(1.0, source=_name(node))
    return None


def tensor_grids(model: onnx.ModelProto) -> dict[str, QuantGrid]:
    """Every top-level tensor that comes out of quantized arithmetic, with its grid."""
    consts = _constants(model)
    grids: dict[str, QuantGrid] = {}
    nodes = model.graph.node
    for index in topological_order(model.graph):
        node = nodes[index]
        started = _source(node, consts)
        if started is not None:
            out = node.output[:1]  # DynamicQuantizeLinear's scale and zero point are not
            grids.update({name: started for name in out if name})
            continue
        if node.op_type == "Concat":
            joined = _concat(node, grids)
            if joined is not None:
                grids[node.output[0]] = joined
            continue
        data = node.input[0] if node.input else ""
        grid = grids.get(data)
        if grid is None:
            if node.op_type in ("Mul", "Add") and len(node.input) > 1:
                grid = grids.get(node.input[1])  # the constant may come first
                if grid is not None:
                    data = node.input[1]
            if grid is None:
                continue
        derived = _derived(node, grid, data, consts)
        if derived is not None:
            grids.update({name: derived for name in node.output if name})
    return grids


def _derived(
    node: onnx.NodeProto, grid: QuantGrid, data: str, consts: Mapping[str, np.ndarray]
) -> QuantGrid | None:
    op = node.op_type
    if op in _DATA_MOVEMENT:
        return grid
    if op in _POOLING:
        return grid if not grid.chain else None
    step = _elementwise(node, consts)
    if step is not None:
        return grid.then(step)
    other = [x for x in node.input if x and x != data]
    if op in ("Mul", "Div", "Add", "Sub") and len(other) == 1 and other[0] in consts:
        value = consts[other[0]].astype(np.float64)
        if op in ("Add", "Sub"):
            if not grid.chain:
                return grid  # a constant shift keeps the spacing
            if value.size == 1:
                shift = float(value.reshape(())) * (1 if op == "Add" else -1)
                return grid.then(Elementwise("Shift", (shift,)))
            return None
        if op == "Div" and data != node.input[0]:
            return None  # c / x: not a scaling
        factor = _max_abs(value if op == "Mul" else 1.0 / value)
        if factor is None:
            return None
        if grid.chain and value.size != 1:
            return None  # a per-element scale after a nonlinear op: no per-element inverse
        if grid.chain:
            scalar = float(value.reshape(()))
            return grid.then(Elementwise("Scale", (scalar if op == "Mul" else 1.0 / scalar,)))
        return grid.scaled(factor)
    return None


def _concat(node: onnx.NodeProto, grids: Mapping[str, QuantGrid]) -> QuantGrid | None:
    """Concat of tensors that all have one grid keeps it (without a chain: the widest)."""
    parts = [grids.get(x) for x in node.input if x]
    if not parts or any(g is None for g in parts):
        return None
    found = [g for g in parts if g is not None]
    if all(g == found[0] for g in found):
        return found[0]
    if any(g.chain for g in found):
        return None
    return max(found, key=lambda g: g.step)


def output_grids(model: onnx.ModelProto) -> tuple[QuantGrid | None, ...]:
    """The grid of each graph output (None where it has none), in output order."""
    grids = tensor_grids(model)
    return tuple(grids.get(o.name) for o in model.graph.output)
