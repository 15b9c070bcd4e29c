"""ONNX subgraphs for the graph reduction (frontends/onnx/reduce.py): nodes counted
recursively, and ``If`` nodes inlined so the reduction reaches inside them.

An ``If`` whose condition onnxruntime computed (or an initializer holds) is replaced by
the branch its value takes on the model's real inputs: the branch's nodes join the outer
graph, their local names prefixed by the ``If`` node's (so none clashes), the branch's
outputs renamed to the ``If``'s (an output the branch passes through from outside gets
an ``Identity``), its initializers moved out. Inlined branches may hold ``If`` nodes of
their own: those are inlined on the next pass, once onnxruntime has their conditions.
``Loop`` and ``Scan`` bodies are not entered (their body runs per iteration, so no one
value per tensor feeds a cut); they are counted.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
import onnx.numpy_helper

from iree_conformance.model.reduction import count_nodes

__all__ = ["count_nodes", "inline_ifs"]


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    graphs: list[onnx.GraphProto] = []
    for attr in node.attribute:
        graphs += list(attr.graphs) + ([attr.g] if attr.HasField("g") else [])
    return graphs


def _rename_in(graph: onnx.GraphProto, names: Mapping[str, str]) -> None:
    """References to the renamed outer names inside a nested subgraph (its own names
    shadow them)."""
    local = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    local |= {o for n in graph.node for o in n.output}
    outer = {k: v for k, v in names.items() if k not in local}
    for n in graph.node:
        n.input[:] = [outer.get(x, x) for x in n.input]
        for g in _subgraphs(n):
            _rename_in(g, outer)
    for o in graph.output:
        o.name = outer.get(o.name, o.name)


def _inline(node: onnx.NodeProto, branch: onnx.GraphProto, prefix: str):
    """The branch's nodes and initializers as the outer graph's, in place of ``node``."""
    local = {t.name for t in branch.initializer} | {o for n in branch.node for o in n.output if o}
    names = {name: f"{prefix}{name}" for name in local}
    outputs = {o.name: out for o, out in zip(branch.output, node.output) if out}
    for inner, outer_name in outputs.items():
        if inner in local and inner not in {t.name for t in branch.initializer}:
            names[inner] = outer_name
    nodes: list[onnx.NodeProto] = []
    for n in branch.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(n)
        copy.input[:] = [names.get(x, x) for x in copy.input]
        copy.output[:] = [names.get(x, x) for x in copy.output]
        copy.name = f"{prefix}{n.name}" if n.name else ""
        for g in _subgraphs(copy):
            _rename_in(g, names)
        nodes.append(copy)
    for inner, outer_name in outputs.items():
        if names.get(inner) != outer_name:  # passed through from outside, or an initializer
            nodes.append(
                onnx.helper.make_node(
                    "Identity", [names.get(inner, inner)], [outer_name], name=f"{prefix}out"
                )
            )
    inits = []
    for t in branch.initializer:
        copy = onnx.TensorProto()
        copy.CopyFrom(t)
        copy.name = names[t.name]
        inits.append(copy)
    return nodes, inits


def inline_ifs(
    model: onnx.ModelProto, values: Mapping[str, np.ndarray]
) -> tuple[onnx.ModelProto, int]:
    """A copy of ``model`` with each top-level ``If`` whose condition is known replaced
    by the branch taken; and how many were inlined."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    constants = {t.name: t for t in graph.initializer}
    nodes: list[onnx.NodeProto] = []
    inlined = 0
    for k, node in enumerate(graph.node):
        cond = node.input[0] if node.op_type == "If" and node.input else None
        value = values.get(cond) if cond else None
        if value is None and cond in constants:
            value = onnx.numpy_helper.to_array(constants[cond])
        if value is None or np.asarray(value).size != 1:
            nodes.append(node)
            continue
        attrs = {a.name: a.g for a in node.attribute}
        branch = attrs["then_branch" if bool(np.asarray(value).reshape(-1)[0]) else "else_branch"]
        new_nodes, inits = _inline(node, branch, f"{node.name or f'if{k}'}/")
        nodes += new_nodes
        graph.initializer.extend(inits)
        inlined += 1
    del graph.node[:]
    graph.node.extend(nodes)
    return out, inlined
