"""The graph reduction without IREE: ddmin, the cuts onnx's Extractor makes, their values
from onnxruntime, the budget (frontends/onnx/reduce.py)."""

from __future__ import annotations

import time

import numpy as np
import onnx
import onnx.checker
import pytest
from onnx import TensorProto, helper

from iree_conformance.frontends.onnx.reduce import (
    Candidate,
    FailureSignature,
    Reducer,
    ReductionError,
    ddmin,
    reduce_onnx,
)
from iree_conformance.frontends.onnx.reference import run_onnxruntime


def chain_model() -> onnx.ModelProto:
    """X -> Relu -> Neg -> Abs -> Reshape(shape computed: Shape, Concat) -> Sigmoid."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2])
    nodes = [
        helper.make_node("Relu", ["X"], ["r"], name="relu"),
        helper.make_node("Neg", ["r"], ["n"], name="neg"),
        helper.make_node("Abs", ["n"], ["a"], name="abs"),
        helper.make_node("Shape", ["a"], ["s"], name="shape"),
        helper.make_node("Slice", ["s", "one", "two"], ["s1"], name="slice"),
        helper.make_node("Concat", ["s1", "minus1"], ["target"], axis=0, name="concat"),
        helper.make_node("Reshape", ["a", "target"], ["rs"], name="reshape"),
        helper.make_node("Sigmoid", ["rs"], ["Y"], name="sigmoid"),
    ]
    inits = [
        helper.make_tensor("one", TensorProto.INT64, [1], [1]),
        helper.make_tensor("two", TensorProto.INT64, [1], [2]),
        helper.make_tensor("minus1", TensorProto.INT64, [1], [-1]),
    ]
    graph = helper.make_graph(nodes, "chain", [x], [y], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


X = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], dtype=np.float32)


def ops(c: Candidate) -> list[str]:
    return [n.op_type for n in c.model.graph.node]


def test_ddmin_finds_the_two_items_that_fail_together():
    calls = []

    def fails(subset):
        calls.append(subset)
        return {3, 11} <= set(subset)

    found, complete = ddmin(tuple(range(16)), fails)
    assert found == (3, 11) and complete
    assert len(calls) < 16 * 4  # far from trying every subset


def test_ddmin_out_of_budget_keeps_the_smallest_failing_set_found():
    def fails(subset):
        time.sleep(0.02)
        return {3, 11} <= set(subset)

    found, complete = ddmin(tuple(range(64)), fails, deadline=time.monotonic() + 0.1)
    assert not complete
    assert {3, 11} <= set(found) and len(found) < 64  # smaller than the whole, still failing


def test_a_cut_gets_onnxruntime_values_and_passes_the_checker():
    model = chain_model()
    reducer = Reducer(model, [X])
    neg = [i for i, n in enumerate(model.graph.node) if n.op_type == "Neg"]
    cut = reducer.candidate(neg)
    assert cut is not None and ops(cut) == ["Neg"]
    onnx.checker.check_model(cut.model, full_check=True)
    assert cut.input_names == ("r",)
    np.testing.assert_array_equal(cut.inputs[0], np.maximum(X, 0))  # Relu's output, real values
    (out,) = run_onnxruntime(cut.model, list(cut.inputs))
    np.testing.assert_array_equal(out, -np.maximum(X, 0))


def test_small_integer_tensors_become_constants_graph_inputs_stay_inputs():
    model = chain_model()
    reducer = Reducer(model, [X])
    reshape = [i for i, n in enumerate(model.graph.node) if n.op_type == "Reshape"]
    cut = reducer.candidate(reshape)
    assert cut is not None
    assert cut.input_names == ("a",)  # the computed shape is a constant: Reshape stays static
    assert "target" in {t.name for t in cut.model.graph.initializer}
    (out,) = run_onnxruntime(cut.model, list(cut.inputs))
    assert out.shape == (3, 2)
    whole = reducer.candidate(range(len(model.graph.node)))
    assert whole is not None and whole.input_names == ("X",)


def test_reduce_onnx_cuts_to_the_node_the_predicate_blames():
    model = chain_model()
    tested = []

    def predicate(c: Candidate) -> bool:  # "fails" whenever Abs is in the graph
        tested.append(c.nodes)
        onnx.checker.check_model(c.model)
        run_onnxruntime(c.model, list(c.inputs))  # every candidate runs on its inputs
        return "Abs" in ops(c)

    result = reduce_onnx(model, [X], predicate, budget_s=60, first_line="'onnx.Neg' failed")
    assert result.nodes_before == 8 and result.nodes_after == 1
    assert result.op_types == ["Abs"] and result.complete
    assert "reduced 8 nodes to 1 (Abs)" in result.summary()
    assert len(tested) == result.tested == len(set(tested))  # no candidate asked twice


def test_reduce_onnx_out_of_budget_says_so():
    model = chain_model()

    def slow(c: Candidate) -> bool:
        time.sleep(0.05)
        return "Abs" in ops(c)

    result = reduce_onnx(model, [X], slow, budget_s=0.08)
    assert not result.complete
    assert "Abs" in result.op_types
    assert "the budget of 0.08 s ran out" in result.summary()


def test_a_model_whose_whole_cut_passes_is_a_clear_error():
    with pytest.raises(ReductionError, match="does not fail the same way"):
        reduce_onnx(chain_model(), [X], lambda c: False, budget_s=10)


def test_malformed_inputs_are_clear_errors():
    empty = helper.make_model(helper.make_graph([], "empty", [], []))
    with pytest.raises(ReductionError, match="no nodes"):
        Reducer(empty, [])
    with pytest.raises(ReductionError, match="1 inputs, 0 values"):
        Reducer(chain_model(), [])


def test_if_nodes_get_the_outer_values_their_branches_read():
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])
    then_out = helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 3])
    else_out = helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 3])
    then_g = helper.make_graph([helper.make_node("Neg", ["h"], ["t"])], "then", [], [then_out])
    else_g = helper.make_graph([helper.make_node("Abs", ["h"], ["e"])], "else", [], [else_out])
    nodes = [
        helper.make_node("Relu", ["X"], ["h"]),
        helper.make_node("If", ["c"], ["Y"], then_branch=then_g, else_branch=else_g),
    ]
    graph = helper.make_graph(nodes, "g", [cond, x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    reducer = Reducer(model, [np.array(True), X])
    cut = reducer.candidate([1])
    assert cut is not None and ops(cut) == ["If"]
    assert set(cut.input_names) == {"c", "h"}  # h: read inside the branches only
    (out,) = run_onnxruntime(cut.model, list(cut.inputs))
    np.testing.assert_array_equal(out, -np.maximum(X, 0))


def test_failure_signature_is_the_report_groups_key():
    a = FailureSignature.of("error@compile", ["", "m.mlir:3:4: error: %12 bad 7"])
    b = FailureSignature.of("error@compile", ["x.mlir:9:1: error: %3 bad 9"])
    assert a.same(b) and a.line == "error: %_ bad N"
    assert not a.same(FailureSignature.of("error@import", ["m.mlir:3:4: error: %12 bad 7"]))
    assert not a.same(None)


def if_model() -> onnx.ModelProto:
    """X -> Relu -> If(sum > 0): then Abs -> Erf -> Neg, else Identity -> Sigmoid."""
    f = TensorProto.FLOAT
    then = helper.make_graph(
        [
            helper.make_node("Abs", ["r"], ["t1"], name="abs"),
            helper.make_node("Erf", ["t1"], ["t2"], name="erf"),
            helper.make_node("Neg", ["t2"], ["t_out"], name="neg"),
        ],
        "then",
        [],
        [helper.make_tensor_value_info("t_out", f, [2, 3])],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["r"], ["e_out"], name="same")],
        "else",
        [],
        [helper.make_tensor_value_info("e_out", f, [2, 3])],
    )
    nodes = [
        helper.make_node("Relu", ["X"], ["r"], name="relu"),
        helper.make_node("ReduceSum", ["r"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="if"),
        helper.make_node("Sigmoid", ["y"], ["Y"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes,
        "with_if",
        [helper.make_tensor_value_info("X", f, [2, 3])],
        [helper.make_tensor_value_info("Y", f, [2, 3])],
        initializer=[helper.make_tensor("zero", f, [], [0.0])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_node_inside_an_if_branch_is_reached_and_nodes_are_counted_recursively():
    from iree_conformance.model.reduction import count_nodes

    def has_erf(graph) -> bool:
        return any(
            n.op_type == "Erf" or any(has_erf(a.g) for a in n.attribute if a.HasField("g"))
            for n in graph.node
        )

    def fails(c: Candidate) -> bool:
        onnx.checker.check_model(c.model, full_check=True)
        return has_erf(c.model.graph)

    model = if_model()
    assert count_nodes(model.graph) == 9
    result = reduce_onnx(model, [X], fails)
    assert ops(result.candidate) == ["Erf"] and result.inlined == 1
    assert result.nodes_before == 9 and result.nodes_after == 1
    assert "reduced 9 nodes to 1" in result.summary() and "1 If node(s) inlined" in result.summary()
    # The Erf is fed what Abs made inside the branch: |relu(X)|
    np.testing.assert_allclose(result.candidate.inputs[0], np.abs(np.maximum(X, 0)))


def test_an_if_whose_inlining_changes_the_failure_stays_whole():
    def fails(c: Candidate) -> bool:  # the If itself is what fails
        return any(n.op_type == "If" for n in c.model.graph.node)

    result = reduce_onnx(if_model(), [X], fails)
    assert ops(result.candidate) == ["If"] and result.inlined == 0
    assert result.nodes_after == 5  # the If and its branches' four nodes


def loop_model() -> onnx.ModelProto:
    """X -> Relu -> Loop 3 times (body: acc = Erf(acc) + 1) -> Neg."""
    f, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    body = helper.make_graph(
        [
            helper.make_node("Erf", ["acc_in"], ["e"], name="erf"),
            helper.make_node("Add", ["e", "one"], ["acc_out"], name="add"),
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", i64, []),
            helper.make_tensor_value_info("cond_in", b, []),
            helper.make_tensor_value_info("acc_in", f, [2, 3]),
        ],
        [
            helper.make_tensor_value_info("cond_out", b, []),
            helper.make_tensor_value_info("acc_out", f, [2, 3]),
        ],
    )
    nodes = [
        helper.make_node("Relu", ["X"], ["r"], name="relu"),
        helper.make_node("Loop", ["trips", "", "r"], ["acc"], body=body, name="loop"),
        helper.make_node("Neg", ["acc"], ["Y"], name="neg"),
    ]
    graph = helper.make_graph(
        nodes,
        "with_loop",
        [helper.make_tensor_value_info("X", f, [2, 3])],
        [helper.make_tensor_value_info("Y", f, [2, 3])],
        initializer=[
            helper.make_tensor("trips", i64, [], [3]),
            helper.make_tensor("one", f, [], [1.0]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_loop_body_is_copied_out_on_its_first_iteration_and_reduced():
    def fails(c: Candidate) -> bool:
        onnx.checker.check_model(c.model, full_check=True)
        return any(
            n.op_type == "Erf" or (n.op_type == "Loop" and "Erf" in str(n.attribute))
            for n in c.model.graph.node
        )

    result = reduce_onnx(loop_model(), [X], fails)
    assert ops(result.candidate) == ["Erf"] and result.bodies == 1
    assert result.nodes_before == 6 and result.nodes_after == 1
    assert "1 Loop/Scan body(ies) copied out" in result.summary()
    # The Erf of the first iteration reads the Loop's initial value: relu(X)
    np.testing.assert_allclose(result.candidate.inputs[0], np.maximum(X, 0))


@pytest.mark.parametrize("text", ["inf", "Infinity", "nan", "0", "-5"])
def test_a_reduce_budget_that_is_not_finite_seconds_is_refused(text):
    """``--reduce-budget inf`` wrote ``"budget_s": Infinity``, which strict JSON refuses."""
    import argparse

    from iree_conformance.repro.reduced import add_budget_argument

    parser = argparse.ArgumentParser()
    add_budget_argument(parser)
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["--reduce-budget", text])
    assert info.value.code == 2
