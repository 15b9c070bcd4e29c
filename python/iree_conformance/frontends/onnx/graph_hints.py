"""What a model's graph says about the sizes of its symbolic dims, read before any guess.

* ``channels``: a rank-4 float input whose axis 1 is symbolic (an exporter's
  ``num_channels``) and that reaches a Conv's data operand (through Cast, Identity,
  Transpose-free element-wise ops such as Sub, Div, Mul, Add): the Conv's weight
  initializer ``[M, C/group, kH, kW]`` gives the count, ``C/group * group``.
* ``positions``: a text model's position embeddings (a rank-2 Gather table, at least 8
  rows, indexed by positions the graph computes, not by a graph input): a sequence longer
  than its rows has no position, so the sequence dim must fit them.

Each hint carries the size and a sentence saying where it was read, as the Outcome's
``info["inputs"]["dims"]`` records it.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from iree_conformance.frontends.onnx.graph_walk import ValueWalk, consumers_of
from iree_conformance.frontends.onnx.values import graph_inputs

__all__ = ["Hint", "channel_hints", "position_limit"]

# Ops a Conv's input may pass through unchanged in layout (normalization, casts).
_LAYOUT_KEEPING = {"Cast", "Identity", "Sub", "Div", "Mul", "Add", "Relu", "Clip"}
_MIN_POSITIONS = 8


@dataclass(frozen=True)
class Hint:
    size: int
    why: str


def _group(node: onnx.NodeProto) -> int:
    return next((int(a.i) for a in node.attribute if a.name == "group"), 1)


def channel_hints(model: onnx.ModelProto) -> dict[tuple[str, int], Hint]:
    """{(input, 1): Hint} for rank-4 inputs whose symbolic channel dim a Conv's weight sets."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    consumers = consumers_of(graph)
    hints: dict[tuple[str, int], Hint] = {}
    for vi in graph_inputs(model):
        if vi.type.WhichOneof("value") != "tensor_type":
            continue
        dims = vi.type.tensor_type.shape.dim
        if len(dims) != 4 or (dims[1].HasField("dim_value") and dims[1].dim_value > 0):
            continue
        walk = ValueWalk(consumers, [vi.name], breadth_first=True)
        for node, pos in walk:
            if node.op_type == "Conv" and pos == 0 and node.input[1] in inits:
                w = inits[node.input[1]]
                if len(w.dims) == 4:
                    size = int(w.dims[1]) * _group(node)
                    hints[(vi.name, 1)] = Hint(
                        size,
                        f"the channels of weight {w.name!r} ({'x'.join(map(str, w.dims))}) "
                        f"of Conv node {node.name or '(unnamed)'!r}",
                    )
                    break
            elif node.op_type in _LAYOUT_KEEPING:
                walk.follow(node)
    return hints


def position_limit(model: onnx.ModelProto) -> Hint | None:
    """The fewest rows of the model's position-embedding tables, if it has any."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    from_inputs = _reached_from_inputs(model)
    best: Hint | None = None
    for node in graph.node:
        if node.op_type != "Gather" or len(node.input) < 2 or node.input[0] not in inits:
            continue
        table = inits[node.input[0]]
        axis = next((int(a.i) for a in node.attribute if a.name == "axis"), 0)
        if len(table.dims) != 2 or axis != 0 or node.input[1] in from_inputs:
            continue
        rows = int(table.dims[0])
        if rows >= _MIN_POSITIONS and (best is None or rows < best.size):
            best = Hint(
                rows,
                f"the position embeddings {table.name!r} ({'x'.join(map(str, table.dims))}) "
                f"have {rows} rows",
            )
    return best


def _reached_from_inputs(model: onnx.ModelProto) -> set[str]:
    """Every value computed from an integer graph input (token ids, token types, masks)."""
    graph = model.graph
    consumers = consumers_of(graph)
    starts = [
        vi.name
        for vi in graph_inputs(model)
        if vi.type.WhichOneof("value") == "tensor_type"
        and vi.type.tensor_type.elem_type
        not in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE)
    ]
    walk = ValueWalk(consumers, starts)
    for node, _ in walk:
        # Not through Shape or Size: positions computed from an input's length are still positions.
        if node.op_type not in ("Shape", "Size"):
            walk.follow(node)
    return walk.seen
