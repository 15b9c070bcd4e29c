"""Numerics bisection against onnxruntime with a fake, perturbing candidate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from iree_conformance.frontends.onnx.bisect import (
    bisect,
    compare_tensor,
    expose_intermediates,
    onnxruntime_runner,
    topological_order,
)


def chain_model() -> onnx.ModelProto:
    """x -> Relu(a) -> Mul(b = a*a) -> Add(y = b + x), plus a Shape side branch."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Mul", ["a", "a"], ["b"], name="square"),
        helper.make_node("Shape", ["b"], ["s"], name="shape"),
        helper.make_node("Add", ["b", "x"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


X = [np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)]


def perturbing(name: str, delta: float):
    def run(model: onnx.ModelProto, inputs: Sequence[np.ndarray]) -> Mapping[str, np.ndarray]:
        values = dict(onnxruntime_runner(model, inputs))
        values[name] = values[name] + np.float32(delta)
        return values

    return run


def test_every_node_output_is_exposed() -> None:
    widened = expose_intermediates(chain_model())
    assert [o.name for o in widened.graph.output] == ["y", "a", "b", "s"]
    assert len(chain_model().graph.output) == 1  # the input model is not modified


def test_first_diverging_node_is_reported() -> None:
    report = bisect(chain_model(), X, perturbing("b", 0.5))
    first = report.first
    assert first is not None
    assert (first.node_index, first.op_type, first.node_name, first.output) == (
        1,
        "Mul",
        "square",
        "b",
    )
    assert first.reason == "values" and first.mismatch_count == first.size == 6
    assert first.max_abs_error == pytest.approx(0.5)
    assert "Mul 'square' output 'b': 6/6 elements differ" in report.summary()


def test_downstream_only_divergence_and_agreement() -> None:
    assert bisect(chain_model(), X, perturbing("y", 0.5)).first.output == "y"
    report = bisect(chain_model(), X, onnxruntime_runner)
    assert report.first is None and report.compared == 4
    # Within tolerance is not a divergence.
    assert bisect(chain_model(), X, perturbing("a", 1e-7)).first is None


def test_shape_divergence_and_missing_outputs() -> None:
    def bad_shape(model, inputs):
        values = dict(onnxruntime_runner(model, inputs))
        values["a"] = values["a"].reshape(3, 2)
        del values["s"]
        return values

    report = bisect(chain_model(), X, bad_shape)
    assert report.first.reason == "shape" and report.first.output == "a"

    def missing(model, inputs):
        values = dict(onnxruntime_runner(model, inputs))
        del values["s"]
        return values

    assert bisect(chain_model(), X, missing).missing == ["s"]


def test_topological_order_fixes_unsorted_graphs() -> None:
    graph = chain_model().graph
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend([nodes[3], nodes[2], nodes[1], nodes[0]])
    names = [graph.node[i].name for i in topological_order(graph)]
    assert sorted(names) == ["add", "relu", "shape", "square"]
    assert (
        names.index("relu") < names.index("square") < min(names.index("shape"), names.index("add"))
    )
    graph.node[3].input[0] = "b"  # relu consumes square's output: relu <-> square
    with pytest.raises(ValueError, match="has a cycle"):
        topological_order(graph)


def test_compare_tensor_rules() -> None:
    a = np.array([1.0, np.nan, 3.0], np.float32)
    assert compare_tensor(a, a.copy(), 1e-3, 0)[0] is None  # NaN equals NaN
    assert compare_tensor(a, a + 1, 1e-3, 0)[0] == "values"
    assert compare_tensor(np.array([1, 2]), np.array([1, 3]), 1.0, 1.0)[0] == "values"
    assert compare_tensor(np.array([1, 2]), np.array([1.0, 2.0]), 0, 0)[0] == "dtype"
    assert compare_tensor(a, a[:2], 0, 0)[0] == "shape"


def test_probes_are_typed_by_shape_inference_not_the_exporters_annotations() -> None:
    from iree_conformance.frontends.onnx.prepare import import_to_mlir
    from tests.support.symbolic_models import annotated_export_model

    widened = expose_intermediates(annotated_export_model())
    (q,) = [o for o in widened.graph.output if o.name == "q"]
    dims = [d.dim_value for d in q.type.tensor_type.shape.dim]
    assert dims == [1, 1, 1, 4] and "q" not in {vi.name for vi in widened.graph.value_info}
    assert "func.func" in import_to_mlir(widened)  # IREE's importer takes every probe
