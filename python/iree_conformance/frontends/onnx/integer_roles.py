"""What an integer input means to its model, read from the graph.

* ``index``: it is (perhaps through Cast, Identity, Squeeze, Unsqueeze, Flatten or
  Reshape of its data) the indices of a Gather or GatherElements whose data is an
  initializer (an embedding table and the like): its values are drawn from
  ``[0, rows)``, the size of that initializer along the gathered axis.
* ``shape``: it feeds the shape operand of Reshape, Expand, ConstantOfShape, Tile, Range,
  Slice, Pad, TopK, OneHot, Resize or Upsample: its values decide a shape, so random
  values are no verdict: a spec must give them.
* ``scalar``: a rank-0 (or one-element) integer input used in no way above: a count, a
  sample rate, a flag. Random values are no verdict either.
* ``mask``: an input named as a mask (``attention_mask``, ``input_mask``...) used in no
  way above: 1 for each real position and 0 for padding after it, as a tokenizer gives.
* ``plain``: anything else; the default integer range applies.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from iree_conformance.frontends.onnx.graph_walk import ValueWalk, consumers_of
from iree_conformance.frontends.onnx.values import graph_inputs

__all__ = ["IntegerRole", "integer_roles"]

_INTEGER_TYPES = {
    onnx.TensorProto.INT8,
    onnx.TensorProto.INT16,
    onnx.TensorProto.INT32,
    onnx.TensorProto.INT64,
    onnx.TensorProto.UINT8,
    onnx.TensorProto.UINT16,
    onnx.TensorProto.UINT32,
    onnx.TensorProto.UINT64,
}
_PASS_THROUGH = {"Cast", "Identity", "Squeeze", "Unsqueeze", "Flatten"}
# op -> operand positions that are shapes, sizes, counts or bounds.
_SHAPE_OPERANDS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,),
    "Expand": (1,),
    "ConstantOfShape": (0,),
    "Tile": (1,),
    "Range": (0, 1, 2),
    "Slice": (1, 2, 3, 4),
    "Pad": (1,),
    "TopK": (1,),
    "OneHot": (1,),
    "Resize": (3,),
    "Upsample": (1,),
}


@dataclass(frozen=True)
class IntegerRole:
    kind: str  # "index", "shape", "scalar", "mask" or "plain"
    why: str
    high: int | None = None  # index: values are drawn from [0, high)

    @property
    def needs_spec(self) -> bool:
        """Random values of this input are no verdict without a spec."""
        return self.kind in ("shape", "scalar")


def _axis(node: onnx.NodeProto) -> int:
    for a in node.attribute:
        if a.name == "axis":
            return int(a.i)
    return 0


def integer_roles(model: onnx.ModelProto) -> dict[str, IntegerRole]:
    """The role of every integer graph input (initializers excluded)."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    consumers = consumers_of(graph)
    roles: dict[str, IntegerRole] = {}
    for vi in graph_inputs(model):
        tensor = vi.type.tensor_type
        if vi.type.WhichOneof("value") != "tensor_type" or tensor.elem_type not in _INTEGER_TYPES:
            continue
        roles[vi.name] = _role(vi, consumers, inits)
    return roles


def _role(vi, consumers, inits) -> IntegerRole:
    walk = ValueWalk(consumers, [vi.name])
    index_high: int | None = None
    index_why = ""
    for node, pos in walk:
        op = node.op_type
        if pos in _SHAPE_OPERANDS.get(op, ()):
            return IntegerRole(
                "shape",
                f"it feeds operand {pos} of {op} node {node.name or op!r}, which sets a shape",
            )
        if op in ("Gather", "GatherElements") and pos == 1 and node.input[0] in inits:
            table = inits[node.input[0]]
            axis = _axis(node)
            dims = list(table.dims)
            if dims:
                rows = int(dims[axis if axis >= 0 else axis + len(dims)])
                if index_high is None or rows < index_high:
                    index_high = rows
                    index_why = (
                        f"it indexes initializer {table.name!r} ({'x'.join(map(str, dims))}) "
                        f"along axis {axis} in {op} node {node.name or op!r}"
                    )
        elif op in _PASS_THROUGH or (op == "Reshape" and pos == 0):
            walk.follow(node)
    if index_high is not None:
        return IntegerRole("index", index_why, index_high)
    dims = vi.type.tensor_type.shape.dim
    if len(dims) == 0 or (
        len(dims) == 1 and dims[0].HasField("dim_value") and dims[0].dim_value == 1
    ):
        return IntegerRole(
            "scalar",
            "a single integer (a count, a size, a rate or a flag): its value carries meaning",
        )
    if "mask" in vi.name.lower() and len(dims) >= 1:
        return IntegerRole("mask", f"its name, {vi.name!r}, says it is a mask", 2)
    return IntegerRole("plain", "no index or shape use found")
