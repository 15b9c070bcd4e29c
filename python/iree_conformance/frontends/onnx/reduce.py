"""The smallest failing graph: delta debugging over the nodes of an ONNX model.

A candidate is a set of the model's top-level nodes, cut out with onnx's own
``onnx.utils.Extractor`` at tensor names: the tensors the set reads but does not make
become the candidate's graph inputs, the tensors it makes and does not use its outputs.
Its inputs' values are what onnxruntime computed for those tensors on the model's real
inputs (the model with every node output exposed, ``bisect.expose_intermediates``), so
the reduced model runs on real values, not random ones. Small integer tensors (at most
``CONSTANT_ELEMENTS`` elements: shapes, axes, indices) become constants instead, so that
a Reshape or Slice keeps the static shape it had inside the model.

``ddmin`` (Zeller and Hildebrandt's delta debugging) keeps a subset when the caller's
predicate says it fails the same way (the engine's: the same stage and the same
normalized first error line, ``FailureSignature``); it first tries each node whose op
the error names alone. Every candidate's result is remembered (a subset is never asked
twice), and the engine compiles through the artifact store. ``budget_s`` bounds the
search: when it runs out, the smallest failing set found so far is the result and
``complete`` is False.

The numerics counterpart (``single_node``): one node cut out with the values it saw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import onnx
import onnx.helper
import onnx.numpy_helper
import onnx.shape_inference
import onnx.utils

from iree_conformance.frontends.ddmin import ddmin
from iree_conformance.frontends.onnx.bisect import expose_intermediates, topological_order
from iree_conformance.frontends.onnx.reference import OnnxRuntimeReferenceError, run_onnxruntime
from iree_conformance.frontends.onnx.subgraphs import copy_out_bodies, inline_ifs
from iree_conformance.model.reduction import (
    Candidate,
    FailureSignature,
    NumericsIsolation,
    ReductionError,
    ReductionResult,
    count_nodes,
)

__all__ = [
    "CONSTANT_ELEMENTS",
    "Candidate",
    "FailureSignature",
    "NumericsIsolation",
    "Reducer",
    "ReductionError",
    "ReductionResult",
    "ddmin",
    "isolate_node",
    "reduce_onnx",
]

#: The output of the ``Identity`` a cut adds after an output that has no shape.
PASSTHROUGH_SUFFIX = "__reduced_out"
#: Integer tensors up to this many elements become constants of a candidate, not inputs.
CONSTANT_ELEMENTS = 64


def _subgraph_references(node: onnx.NodeProto) -> set[str]:
    """The outer-scope names a node's subgraphs (If, Loop, Scan bodies) read."""
    names: set[str] = set()
    for attr in node.attribute:
        graphs = list(attr.graphs) + ([attr.g] if attr.HasField("g") else [])
        for g in graphs:
            local = {i.name for i in g.input} | {t.name for t in g.initializer}
            local |= {o for n in g.node for o in n.output}
            for n in g.node:
                names |= {x for x in n.input if x and x not in local}
                names |= _subgraph_references(n) - local
            names |= {o.name for o in g.output if o.name not in local}
    return names


def _is_constant_like(value: np.ndarray) -> bool:
    return value.dtype.kind in "iub" and value.size <= CONSTANT_ELEMENTS


class Reducer:
    """Cuts candidates out of one model (as compiled: static input shapes set) with the
    values onnxruntime computed for its real inputs."""

    def __init__(self, model: onnx.ModelProto, inputs: Sequence[np.ndarray]):
        if not model.graph.node:
            raise ReductionError("the model has no nodes: there is nothing to reduce")
        self.model = model
        self.order = topological_order(model.graph)
        self.nodes = list(model.graph.node)
        self.initializers = {t.name for t in model.graph.initializer}
        self.graph_outputs = [o.name for o in model.graph.output]
        graph_inputs = [i.name for i in model.graph.input if i.name not in self.initializers]
        if len(graph_inputs) != len(inputs):
            raise ReductionError(
                f"the model has {len(graph_inputs)} inputs, {len(inputs)} values were given"
            )
        widened = expose_intermediates(model)
        try:
            values = run_onnxruntime(widened, inputs)
        except OnnxRuntimeReferenceError as e:
            raise ReductionError(
                f"onnxruntime cannot run the model, so its intermediate tensors have no "
                f"values to feed the subgraphs: {e}"
            ) from None
        self.graph_inputs = set(graph_inputs)  # stay inputs: never made constants
        self.values: dict[str, np.ndarray] = dict(zip(graph_inputs, inputs, strict=True))
        self.values.update(
            {o.name: np.asarray(v) for o, v in zip(widened.graph.output, values, strict=True)}
        )
        self.inferred = self._inferred(model)
        graph = self.inferred.graph
        # Tensors whose type has a shape (a graph input or output needs one: onnx.checker).
        self.typed = {
            vi.name
            for vi in (*graph.value_info, *graph.input, *graph.output)
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")
        }
        self.extractor = onnx.utils.Extractor(self.inferred)
        # What each node reads: its inputs and what its subgraphs read from outside.
        self.reads = [
            [x for x in n.input if x] + sorted(_subgraph_references(n) - set(n.input))
            for n in self.nodes
        ]

    def candidate(self, nodes: Iterable[int]) -> Candidate | None:
        """The subgraph of these nodes, or None when it cannot be fed (a tensor it reads
        has no value: a sequence, a map, or a value onnxruntime did not give)."""
        chosen = sorted(set(nodes), key=self.order.index)
        made = {o for i in chosen for o in self.nodes[i].output if o}
        read: list[str] = []
        for i in chosen:
            read += [x for x in self.reads[i] if x not in made and x not in read]
        explicit = {x for i in chosen for x in self.nodes[i].input}
        outputs = [
            o
            for i in chosen
            for o in self.nodes[i].output
            if o and (o not in explicit or o in self.graph_outputs)
        ]
        fed = [x for x in read if x not in self.initializers]
        if any(x not in self.values for x in fed) or not outputs:
            return None
        constants = [
            x for x in fed if x not in self.graph_inputs and _is_constant_like(self.values[x])
        ]
        inputs = [x for x in fed if x not in constants]
        try:
            model = self._extract(fed, outputs)
        except Exception:  # noqa: BLE001 - a cut onnx cannot make is no candidate
            return None
        graph = model.graph
        kept = [vi for vi in graph.input if vi.name not in constants]
        del graph.input[:]
        graph.input.extend(kept)
        present = {t.name for t in graph.initializer}
        for name in constants:
            graph.initializer.append(onnx.numpy_helper.from_array(self.values[name], name))
        # Outer-scope initializers that only a subgraph reads (Extractor follows inputs).
        for t in self.model.graph.initializer:
            if t.name in read and t.name not in present:
                graph.initializer.append(t)
        graph.name = f"{self.model.graph.name or 'model'}_reduced"
        return Candidate(tuple(chosen), model, tuple(inputs), tuple(self.values[x] for x in inputs))

    def _inferred(self, model: onnx.ModelProto) -> onnx.ModelProto:
        """The model after shape inference (as the importer sees it: symbolic dims stay
        symbolic). Tensors it leaves untyped stay untyped inside a candidate: a type
        from onnxruntime's values would change what IREE imports."""
        try:
            return onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - the values' types are enough for the cuts
            return model

    def _extract(self, fed: list[str], outputs: list[str]) -> onnx.ModelProto:
        """Extractor's cut. A cut input that shape inference left without a shape gets
        its value's type. A cut output without one stays as it was inside the model (its
        producer's result type is what IREE saw) and passes through an ``Identity``
        whose output, the graph's, has its value's type: ``PASSTHROUGH_SUFFIX``."""
        untyped_in = [x for x in fed if x not in self.typed]
        untyped_out = [x for x in outputs if x not in self.typed]
        if not untyped_in and not untyped_out:
            return self.extractor.extract_model(fed, outputs)
        model = onnx.ModelProto()
        model.CopyFrom(self.inferred)
        graph = model.graph
        kept = [vi for vi in graph.value_info if vi.name not in untyped_in]
        del graph.value_info[:]
        graph.value_info.extend(kept)
        renamed = []
        for name in outputs:
            if name in untyped_out:
                graph.node.append(
                    onnx.helper.make_node("Identity", [name], [name + PASSTHROUGH_SUFFIX])
                )
                name += PASSTHROUGH_SUFFIX
            renamed.append(name)
        for name in (*untyped_in, *(x + PASSTHROUGH_SUFFIX for x in untyped_out)):
            v = self.values[name.removesuffix(PASSTHROUGH_SUFFIX)]
            graph.value_info.append(
                onnx.helper.make_tensor_value_info(
                    name, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape
                )
            )
        return onnx.utils.Extractor(model).extract_model(fed, renamed)

    def op_order(self, first_line: str) -> list[int]:
        """Nodes whose op type the error line names (``onnx.Cast``, ``'Cast'``), in
        topological order: the first candidates tried alone."""
        named = [i for i in self.order if f"onnx.{self.nodes[i].op_type}" in first_line]
        return named or [i for i in self.order if f"'{self.nodes[i].op_type}'" in first_line]


Predicate = Callable[[Candidate], bool]
Progress = Callable[[int, int], None]  # (candidates checked, nodes in the smallest so far)


def reduce_onnx(
    model: onnx.ModelProto | str,
    inputs: Sequence[np.ndarray],
    predicate: Predicate,
    budget_s: float | None = None,
    progress: Progress | None = None,
    first_line: str = "",
) -> ReductionResult:
    """The smallest subgraph of ``model`` (as compiled) for which ``predicate`` holds.

    ``inputs``: the model's real inputs, in graph-input order (onnxruntime computes every
    intermediate tensor from them). ``predicate``: whether a candidate fails the same
    way as the whole model. ``first_line``: the failure's first error line (the nodes
    whose op it names are tried alone first). Raises ReductionError when the model
    cannot be cut, or when the whole model, cut out whole, does not fail the same way."""
    start = time.monotonic()
    if isinstance(model, str):
        model = onnx.load(model)
    reducer = Reducer(model, inputs)
    deadline = start + budget_s if budget_s is not None else None
    tested = 0
    # If nodes whose condition is known: the branch taken inlined (subgraphs.py), pass
    # after pass, while the inlined model, cut out whole, still fails the same way.
    # Then Loop and Scan bodies copied out on their first iteration's values, once.
    inlined = bodies = 0
    while True:
        flat, count = inline_ifs(reducer.model, reducer.values)
        kind = "if"
        if not count and not bodies:
            flat, count = copy_out_bodies(reducer.model)
            kind = "body"
        if not count:
            break
        try:
            flat_reducer = Reducer(flat, inputs)
        except ReductionError:
            break
        whole_flat = flat_reducer.candidate(flat_reducer.order)
        tested += 1
        if whole_flat is None or not predicate(whole_flat):
            break
        reducer = flat_reducer
        if kind == "if":
            inlined += count
        else:
            bodies += count
    built: dict[tuple[int, ...], Candidate | None] = {}
    answers: dict[tuple[int, ...], bool] = {}
    smallest_size = len(reducer.order)

    def cut(subset: tuple[int, ...]) -> Candidate | None:
        key = tuple(sorted(subset))
        if key not in built:
            built[key] = reducer.candidate(key)
        return built[key]

    def fails(subset: tuple[int, ...]) -> bool:
        nonlocal tested
        key = tuple(sorted(subset))
        if key not in answers:
            candidate = cut(key)
            answers[key] = candidate is not None and predicate(candidate)
            tested += 1
            if progress is not None:
                progress(tested, smallest_size)
        return answers[key]

    def smaller(subset: tuple[int, ...]) -> None:
        nonlocal smallest_size
        smallest_size = len(subset)
        if progress is not None:
            progress(tested, smallest_size)

    whole = tuple(reducer.order)
    if not fails(whole):
        raise ReductionError(
            "the model cut out whole (every node, fed onnxruntime's values) does not fail "
            "the same way, so no part of it can be judged; the failure may need the "
            "original graph inputs or initializers as they were"
        )
    if bodies:  # the copies stand in for their Loop and Scan nodes when they fail alone
        copied = {
            i
            for i in whole
            if reducer.nodes[i].op_type in ("Loop", "Scan")
            and "/body0/" not in reducer.nodes[i].name
        }
        without = tuple(i for i in whole if i not in copied)
        if without and fails(without):
            whole = without
        else:
            bodies = 0  # the Loop or Scan itself is needed: the copies opened nothing
    first = [(i,) for i in reducer.op_order(first_line)]
    found, complete = ddmin(whole, fails, deadline, first, smaller)
    candidate = cut(found)
    assert candidate is not None  # found failed, so it was built
    return ReductionResult(
        nodes_before=count_nodes(model.graph),
        candidate=candidate,
        complete=complete,
        tested=tested,
        elapsed_s=time.monotonic() - start,
        budget_s=budget_s,
        inlined=inlined,
        bodies=bodies,
    )


Runner = Callable[[onnx.ModelProto, Sequence[np.ndarray]], dict[str, np.ndarray]]


def isolate_node(
    model: onnx.ModelProto,
    inputs: Sequence[np.ndarray],
    run_candidate: Runner,
    rtol: float,
    atol: float,
) -> NumericsIsolation | None:
    """The numerics bisection's first diverging node as a model of its own, fed the values
    onnxruntime computed for its inputs, run by ``run_candidate`` (IREE) and compared with
    onnxruntime's outputs for it by the final comparison's rule. None: nothing diverges."""
    from iree_conformance.frontends.onnx.bisect import bisect, compare_tensor

    first = bisect(model, inputs, run_candidate, rtol=rtol, atol=atol).first
    if first is None:
        return None
    reducer = Reducer(model, inputs)
    candidate = reducer.candidate((first.node_index,))
    if candidate is None:
        why = "it reads a value that is no tensor, so it cannot run alone"
        return NumericsIsolation(first.node_name, first.op_type, None, [], None, why)
    outputs = [o.name for o in candidate.model.graph.output]
    expected = [reducer.values[o] for o in outputs]
    try:
        actual = run_candidate(candidate.model, list(candidate.inputs))
    except Exception as e:  # noqa: BLE001 - the node that does not run alone is a finding
        why = f"it does not run alone: {e}"
        return NumericsIsolation(first.node_name, first.op_type, candidate, expected, None, why)
    for name, want in zip(outputs, expected, strict=True):
        reason, max_abs, _, count = compare_tensor(want, actual[name], rtol, atol)
        if reason is not None:
            detail = (
                f"output {name!r}: {count}/{want.size} elements differ, max abs error {max_abs:.3g}"
            )
            return NumericsIsolation(
                first.node_name, first.op_type, candidate, expected, True, detail
            )
    detail = f"within rtol {rtol:g}, atol {atol:g}"
    return NumericsIsolation(first.node_name, first.op_type, candidate, expected, False, detail)
