"""Nodes whose outputs are random, so that no reference can judge a run of the model.

A Dropout whose ``training_mode`` is a constant true and whose ``ratio`` is not a
constant 0 drops a random part of its input on every run (``torch.onnx.export(...,
dynamo=True)`` of a module left in training mode exports this), and the Random* ops and
Bernoulli draw values: onnxruntime and IREE each draw their own, and two onnxruntime runs
differ too. IREE's compile is still a verdict; its run is not.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

__all__ = ["random_reason"]

_RANDOM_OPS = {
    "RandomNormal",
    "RandomUniform",
    "RandomNormalLike",
    "RandomUniformLike",
    "Bernoulli",
    "Multinomial",
}


def _constants(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    values = {t.name: t for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value":
                    values[node.output[0]] = attr.t
    return {k: numpy_helper.to_array(v) for k, v in values.items() if not v.data_location}


def _training_dropout(node: onnx.NodeProto, consts: dict[str, np.ndarray]) -> bool:
    if node.op_type != "Dropout" or len(node.input) < 3 or not node.input[2]:
        return False
    mode = consts.get(node.input[2])
    if mode is None or not bool(np.all(mode)):
        return False
    ratio = consts.get(node.input[1]) if len(node.input) > 1 and node.input[1] else None
    return ratio is None or bool(np.any(ratio != 0))  # absent: the default ratio, 0.5


def random_reason(model: onnx.ModelProto) -> str | None:
    """One line naming the graph's first random node and what to do, or None."""
    graph = model.graph
    consts = _constants(graph)
    for node in graph.node:
        name = node.name or "(unnamed)"
        if _training_dropout(node, consts):
            return (
                f"Dropout node '{name}' runs in training mode (its training_mode is a "
                "constant true): its outputs are random on every run; export the model "
                "in eval mode (model.eval() before torch.onnx.export)"
            )
        if node.op_type in _RANDOM_OPS:
            return f"{node.op_type} node '{name}' draws random values on every run"
    return None
