"""ONNX subgraphs for the graph reduction (frontends/onnx/reduce.py): nodes counted
recursively, and ``If`` nodes inlined so the reduction reaches inside them.

An ``If`` whose condition onnxruntime computed (or an initializer holds) is replaced by
the branch its value takes on the model's real inputs: the branch's nodes join the outer
graph, their local names prefixed by the ``If`` node's (so none clashes), the branch's
outputs renamed to the ``If``'s (an output the branch passes through from outside gets
an ``Identity``), its initializers moved out. Inlined branches may hold ``If`` nodes of
their own: those are inlined on the next pass, once onnxruntime has their conditions.
A ``Loop`` or ``Scan`` body runs per iteration, so it is not inlined: it is copied out
beside its node, fed its first iteration's values (``copy_out_bodies``), so the search
can keep the copy's failing node and drop the rest. Nested bodies are not copied out.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
import onnx.numpy_helper

from iree_conformance.model.reduction import count_nodes

__all__ = ["copy_out_bodies", "count_nodes", "inline_ifs"]


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


def _splice(
    body: onnx.GraphProto,
    prefix: str,
    bound: Mapping[str, str] | None = None,
    outputs: Mapping[str, str] | None = None,
) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    """A subgraph's nodes and initializers as the outer graph's: its local names
    prefixed, its inputs read from the outer names ``bound`` gives, the outputs named in
    ``outputs`` renamed to the outer names (an output passed through from outside, or an
    initializer, through an ``Identity``)."""
    outputs = outputs or {}
    inits_local = {t.name for t in body.initializer}
    made = {o for n in body.node for o in n.output if o}
    names = {name: f"{prefix}{name}" for name in inits_local | made}
    names.update(bound or {})
    for inner, outer_name in outputs.items():
        if inner in made:
            names[inner] = outer_name
    nodes: list[onnx.NodeProto] = []
    for n in body.node:
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
    for t in body.initializer:
        copy = onnx.TensorProto()
        copy.CopyFrom(t)
        copy.name = names[t.name]
        inits.append(copy)
    return nodes, inits


def _constant(name: str, dtype: int, value: int | bool) -> onnx.NodeProto:
    tensor = onnx.helper.make_tensor(name, dtype, [], [value])
    return onnx.helper.make_node("Constant", [], [name], value=tensor, name=name)


def _first_iteration(node: onnx.NodeProto, k: int) -> list[onnx.NodeProto]:
    """A ``Loop`` or ``Scan`` body's copy fed its first iteration's values: a Loop's
    iteration number 0, its condition and its carried values' initial ones; a Scan's
    initial states and each scan input's first slice (``Gather`` index 0 on its axis)."""
    attrs = {a.name: a for a in node.attribute}
    body = attrs["body"].g
    prefix = f"{node.name or f'{node.op_type.lower()}{k}'}/body0/"
    names = [i.name for i in body.input]
    feed: list[onnx.NodeProto] = []
    if node.op_type == "Loop":
        iteration = _constant(f"{prefix}iteration", onnx.TensorProto.INT64, 0)
        cond = node.input[1] if len(node.input) > 1 and node.input[1] else ""
        if not cond:
            feed.append(_constant(f"{prefix}cond", onnx.TensorProto.BOOL, True))
            cond = f"{prefix}cond"
        feed.insert(0, iteration)
        outer = [iteration.output[0], cond, *node.input[2:]]
    else:
        scans = attrs["num_scan_inputs"].i
        states = list(node.input[: len(node.input) - scans])
        axes = list(attrs["scan_input_axes"].ints) if "scan_input_axes" in attrs else []
        zero = _constant(f"{prefix}zero", onnx.TensorProto.INT64, 0)
        feed.append(zero)
        slices = []
        for j, name in enumerate(node.input[len(states) :]):
            out = f"{prefix}slice{j}"
            axis = axes[j] if j < len(axes) else 0
            feed.append(onnx.helper.make_node("Gather", [name, zero.output[0]], [out], axis=axis))
            slices.append(out)
        outer = [*states, *slices]
    nodes, _ = _splice(body, prefix, dict(zip(names, outer)))
    return feed + nodes


def copy_out_bodies(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """A copy of ``model`` where each top-level ``Loop`` and ``Scan`` is followed by its
    body's nodes fed their first iteration's values (the node itself stays, so the model
    computes what it did); how many bodies were copied out. Body initializers stay in
    the body (a body holding any is left as it is)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    nodes: list[onnx.NodeProto] = []
    copied = 0
    for k, node in enumerate(graph.node):
        nodes.append(node)
        body = next((a.g for a in node.attribute if a.name == "body"), None)
        if node.op_type in ("Loop", "Scan") and body is not None and not body.initializer:
            nodes += _first_iteration(node, k)
            copied += 1
    del graph.node[:]
    graph.node.extend(nodes)
    return out, copied


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
        outputs = {o.name: out for o, out in zip(branch.output, node.output) if out}
        new_nodes, inits = _splice(branch, f"{node.name or f'if{k}'}/", outputs=outputs)
        nodes += new_nodes
        graph.initializer.extend(inits)
        inlined += 1
    del graph.node[:]
    graph.node.extend(nodes)
    return out, inlined
