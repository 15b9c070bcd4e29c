"""graph_walk: each value's consumers once, through the followed nodes only, in the order asked."""

from __future__ import annotations

from onnx import helper

from iree_conformance.frontends.onnx.graph_walk import ValueWalk, consumers_of


def _graph():
    # x -> Relu -> a -> Neg -> b ; x -> Shape -> s ; a -> Add(a, a) -> c
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Neg", ["a"], ["b"], name="neg"),
        helper.make_node("Add", ["a", "a"], ["c"], name="add"),
    ]
    return helper.make_graph(nodes, "g", [], [])


def test_consumers_name_each_input_position():
    consumers = consumers_of(_graph())
    assert [(n.name, pos) for n, pos in consumers["a"]] == [("neg", 0), ("add", 0), ("add", 1)]
    assert [n.name for n, _ in consumers["x"]] == ["relu", "shape"]


def test_only_followed_nodes_reach_further():
    walk = ValueWalk(consumers_of(_graph()), ["x"])
    met = []
    for node, _ in walk:
        met.append(node.name)
        if node.op_type != "Shape":
            walk.follow(node)
    assert walk.seen == {"x", "a", "b", "c"}  # not s: Shape was not followed
    assert met.count("add") == 2  # once per input position, a value visited once


def test_breadth_first_takes_values_in_the_order_reached():
    # x -> first -> p -> P ; x -> second -> q -> Q
    nodes = [
        helper.make_node("Relu", ["x"], ["p"], name="first"),
        helper.make_node("Relu", ["x"], ["q"], name="second"),
        helper.make_node("Relu", ["p"], ["P"], name="P"),
        helper.make_node("Relu", ["q"], ["Q"], name="Q"),
    ]
    consumers = consumers_of(helper.make_graph(nodes, "g", [], []))
    orders = {}
    for breadth in (False, True):
        walk = ValueWalk(consumers, ["x"], breadth_first=breadth)
        met = []
        for node, _ in walk:
            met.append(node.name)
            walk.follow(node)
        orders[breadth] = met
    assert orders[True] == ["first", "second", "P", "Q"]  # p was reached first
    assert orders[False] == ["first", "second", "Q", "P"]  # q was reached last
