"""Numerics triage: find the first node whose output diverges from onnxruntime.

When a model's final outputs mismatch, the first bad node is usually far upstream.
Like onnx-mlir's CheckONNXModel, this makes every top-level node output a graph
output, runs the widened model on both the candidate (the caller's IREE run, passed in
as ``run_candidate``) and onnxruntime, and walks the nodes in topological order to the
first output beyond ``atol + rtol * |expected|``.
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

__all__ = [
    "BisectReport",
    "Divergence",
    "Runner",
    "bisect",
    "compare_tensor",
    "expose_intermediates",
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

    Types come from shape inference where known; outputs inferred as non-tensors
    (sequences, maps) are left out, since neither side can compare them.
    """
    widened = onnx.ModelProto()
    widened.CopyFrom(model)
    try:
        inferred = onnx.shape_inference.infer_shapes(widened)
    except Exception:
        inferred = widened
    types = {vi.name: vi for vi in inferred.graph.value_info}
    existing = {o.name for o in widened.graph.output}
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


def onnxruntime_runner(
    model: onnx.ModelProto, inputs: Sequence[np.ndarray]
) -> dict[str, np.ndarray]:
    """The reference side: onnxruntime results by output name."""
    values = run_onnxruntime(model, inputs)
    return {o.name: v for o, v in zip(model.graph.output, values, strict=True)}


def compare_tensor(
    expected: np.ndarray, actual: np.ndarray, rtol: float, atol: float
) -> tuple[str | None, float, float, int]:
    """(reason or None, max abs error, max rel error, mismatch count).

    Floats match within ``atol + rtol * |expected|`` with NaN equal to NaN; integers
    and bools must be equal.
    """
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.shape != actual.shape:
        return "shape", float("inf"), float("inf"), int(expected.size)
    if expected.size == 0:
        return None, 0.0, 0.0, 0
    exp_float = np.issubdtype(expected.dtype, np.floating) or expected.dtype.kind == "V"
    if not exp_float and np.issubdtype(actual.dtype, np.floating):
        return "dtype", float("inf"), float("inf"), int(expected.size)
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    both_nan = np.isnan(e) & np.isnan(a)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.where(both_nan | (e == a), 0.0, np.abs(a - e))
        diff = np.where(np.isnan(diff), np.inf, diff)
        rel = np.where(e != 0, diff / np.abs(e), np.where(diff == 0, 0.0, np.inf))
        if exp_float:
            bad = diff > atol + rtol * np.abs(e)
        else:
            bad = diff != 0
    return (
        "values" if bad.any() else None,
        float(diff.max()),
        float(rel.max()),
        int(bad.sum()),
    )


def bisect(
    model: onnx.ModelProto,
    inputs: Sequence[np.ndarray],
    run_candidate: Runner,
    *,
    rtol: float = 1e-3,
    atol: float = 1e-5,
    run_reference: Runner = onnxruntime_runner,
) -> BisectReport:
    """Run the widened model on both sides and report the first diverging node."""
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
                expected[name], actual[name], rtol, atol
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
