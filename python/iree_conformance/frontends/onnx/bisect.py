"""Numerics triage: find the first node whose output diverges from onnxruntime.

When a model's final outputs mismatch, the first bad node is usually far upstream.
Like onnx-mlir's CheckONNXModel, this makes every top-level node output a graph
output, runs the widened model on both the candidate (the caller's IREE run, passed in
as ``run_candidate``) and onnxruntime, and walks the nodes in topological order to the
first output the final comparison would reject (``model.compare.compare_arrays``: the
same tolerance, dtype rules and quantization grids).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnx.shape_inference

from iree_conformance.frontends.onnx.reference import run_onnxruntime
from iree_conformance.frontends.onnx.values import value_kind
from iree_conformance.model.compare import Tolerance, compare_arrays
from iree_conformance.model.quantization import QuantGrid

__all__ = [
    "BisectReport",
    "Divergence",
    "Runner",
    "bisect",
    "compare_tensor",
    "expose_intermediates",
    "inferred_types",
    "onnxruntime_runner",
    "topological_order",
]

Runner = Callable[[onnx.ModelProto, Sequence[np.ndarray]], Mapping[str, np.ndarray]]


@dataclass(frozen=True)
class Divergence:
    """The first diverging node output, with error figures over its elements."""

    node_index: int
    node_name: str
    op_type: str
    output: str
    reason: str  # "values", "shape" or "dtype"
    max_abs_error: float
    max_rel_error: float
    mismatch_count: int
    size: int
    expected_shape: tuple[int, ...]
    actual_shape: tuple[int, ...]

    def describe(self) -> str:
        where = f"node #{self.node_index} {self.op_type} {self.node_name or '<unnamed>'!r}"
        if self.reason != "values":
            return (
                f"{where} output {self.output!r}: {self.reason} differs (expected "
                f"{self.expected_shape}, got {self.actual_shape})"
            )
        return (
            f"{where} output {self.output!r}: {self.mismatch_count}/{self.size} elements "
            f"differ, max abs error {self.max_abs_error:.3g}, max rel error "
            f"{self.max_rel_error:.3g}"
        )


@dataclass
class BisectReport:
    first: Divergence | None
    compared: int
    missing: list[str] = field(default_factory=list)

    def summary(self) -> str:
        head = self.first.describe() if self.first else "no intermediate output diverges"
        tail = f"; {len(self.missing)} outputs not produced by both runs" if self.missing else ""
        return f"{head} ({self.compared} tensors compared{tail})"


def topological_order(graph: onnx.GraphProto) -> list[int]:
    """Node indices in a topological order, preferring graph order among ready nodes."""
    producer = {out: i for i, n in enumerate(graph.node) for out in n.output if out}
    users: list[list[int]] = [[] for _ in graph.node]
    pending = [0] * len(graph.node)
    for i, node in enumerate(graph.node):
        for dep in {producer[x] for x in node.input if x in producer and producer[x] != i}:
            users[dep].append(i)
            pending[i] += 1
    ready = [i for i, count in enumerate(pending) if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for user in users[i]:
            pending[user] -= 1
            if pending[user] == 0:
                heapq.heappush(ready, user)
    if len(order) != len(graph.node):
        raise ValueError(f"graph {graph.name!r} has a cycle; it is not a valid ONNX graph")
    return order


def expose_intermediates(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose graph outputs include every top-level node output.

    Types come from onnx's shape inference where known (``inferred_types``), never from
    the exporter's ``value_info`` annotations: a dynamo export's ``[?,1,1,?]`` as a
    graph output is a type IREE's importer rejects against the one it infers. Outputs
    inferred as non-tensors (sequences, maps) are left out, since neither side can
    compare them.
    """
    widened = onnx.ModelProto()
    widened.CopyFrom(model)
    types = inferred_types(model)
    existing = {o.name for o in widened.graph.output}
    # A probe's type is its graph output's: the annotation of the same name goes.
    kept = [vi for vi in widened.graph.value_info if vi.name in existing or vi.name not in types]
    del widened.graph.value_info[:]
    widened.graph.value_info.extend(kept)
    for node in widened.graph.node:
        for name in node.output:
            if not name or name in existing:
                continue
            existing.add(name)
            info = types.get(name)
            if info is not None and value_kind(info.type) not in ("tensor", "unknown"):
                continue
            widened.graph.output.append(
                info if info is not None else onnx.ValueInfoProto(name=name)
            )
    return widened


def inferred_types(model: onnx.ModelProto) -> dict[str, onnx.ValueInfoProto]:
    """onnx's inferred type of each intermediate tensor, from the graph alone: the
    exporter's ``value_info`` annotations are cleared first, so none of them survives."""
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    del bare.graph.value_info[:]
    try:
        inferred = onnx.shape_inference.infer_shapes(bare)
    except Exception:  # noqa: BLE001 - untyped probes still run
        return {}
    return {vi.name: vi for vi in inferred.graph.value_info}


def onnxruntime_runner(
    model: onnx.ModelProto, inputs: Sequence[np.ndarray]
) -> dict[str, np.ndarray]:
    """The reference side: onnxruntime results by output name."""
    values = run_onnxruntime(model, inputs)
    return {o.name: v for o, v in zip(model.graph.output, values, strict=True)}


def compare_tensor(
    expected: np.ndarray,
    actual: np.ndarray,
    rtol: float | None,
    atol: float | None,
    grid: QuantGrid | None = None,
) -> tuple[str | None, float, float, int]:
    """(reason or None, max abs error, max rel error, mismatch count).

    The final comparison's rule (``model.compare.compare_arrays``), dtype rules included:
    an unsigned tensor handed back as the signed type of its width is the same bits; a
    tensor with a quantization grid may be up to k steps of it away. A tolerance left
    None is its dtype's default, as in the final comparison.
    """
    expected, actual = np.asarray(expected), np.asarray(actual)
    tolerance = Tolerance(rtol=rtol, atol=atol, grids=(grid,) if grid is not None else ())
    problems, metrics = compare_arrays(0, actual, expected, tolerance)
    if not problems:
        return None, metrics["max_abs_error"], metrics["max_rel_error"], 0
    if expected.shape != actual.shape:
        return "shape", float("inf"), float("inf"), int(expected.size)
    if metrics["compared_elements"] == 0:  # same shape, different dtype
        return "dtype", float("inf"), float("inf"), int(expected.size)
    return "values", metrics["max_abs_error"], metrics["max_rel_error"], metrics["mismatch_count"]


def bisect(
    model: onnx.ModelProto,
    inputs: Sequence[np.ndarray],
    run_candidate: Runner,
    *,
    rtol: float = 1e-3,
    atol: float = 1e-5,
    run_reference: Runner = onnxruntime_runner,
    grids: Mapping[str, QuantGrid] | None = None,
) -> BisectReport:
    """Run the widened model on both sides and report the first diverging node.

    grids: the quantization grid of each tensor that has one (``quant_grid.tensor_grids``):
    such a tensor is judged as a final output with that grid would be."""
    widened = expose_intermediates(model)
    expected = run_reference(widened, inputs)
    actual = run_candidate(widened, inputs)
    missing: list[str] = []
    compared = 0
    nodes = model.graph.node
    for index in topological_order(model.graph):
        node = nodes[index]
        for name in node.output:
            if not name:
                continue
            if name not in expected or name not in actual:
                missing.append(name)
                continue
            reason, max_abs, max_rel, count = compare_tensor(
                expected[name], actual[name], rtol, atol, (grids or {}).get(name)
            )
            compared += 1
            if reason is not None:
                first = Divergence(
                    node_index=index,
                    node_name=node.name,
                    op_type=node.op_type,
                    output=name,
                    reason=reason,
                    max_abs_error=max_abs,
                    max_rel_error=max_rel,
                    mismatch_count=count,
                    size=int(np.asarray(expected[name]).size),
                    expected_shape=tuple(np.asarray(expected[name]).shape),
                    actual_shape=tuple(np.asarray(actual[name]).shape),
                )
                return BisectReport(first, compared, missing)
    return BisectReport(None, compared, missing)
