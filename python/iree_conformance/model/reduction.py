"""What a reduction of a failing case is: its failure's signature, a candidate subgraph,
the result, and a numerics failure's node run alone (the contracts between
frontends/onnx/reduce.py, which cuts, and engine/reduction.py, which compiles).

A failure's signature is its kind and stage and its normalized first error line: the
report's failure-group key (``common.diagnostics.normalize``, as report/model.py groups).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from iree_conformance.common.diagnostics import normalize

__all__ = [
    "Candidate",
    "count_nodes",
    "FailureSignature",
    "NumericsIsolation",
    "ReductionError",
    "ReductionResult",
]


def count_nodes(graph: Any) -> int:
    """An ONNX graph's nodes and those of every subgraph (If, Loop, Scan bodies),
    recursively: what every report counts."""
    total = 0
    for node in graph.node:
        total += 1
        for attr in node.attribute:
            for g in [*attr.graphs, *([attr.g] if attr.HasField("g") else [])]:
                total += count_nodes(g)
    return total


class ReductionError(Exception):
    """The model cannot be reduced (onnxruntime cannot run it, it has no nodes)."""


@dataclasses.dataclass(frozen=True)
class FailureSignature:
    """How a run failed: its stage and its normalized first error line (the report's
    failure-group key, ``report.model``'s grouping; ``common.diagnostics.normalize``)."""

    stage: str
    line: str
    first_line: str  # as printed, for people

    @classmethod
    def of(cls, stage: str, diagnostics: Iterable[str]) -> FailureSignature:
        first = next((d for d in diagnostics if d.strip()), "")
        return cls(str(stage), normalize(first) if first else "(no diagnostic)", first.strip())

    def same(self, other: FailureSignature | None) -> bool:
        return other is not None and (self.stage, self.line) == (other.stage, other.line)


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A subgraph: its nodes (indices into the model's graph), the model and its inputs
    (in the model's graph-input order)."""

    nodes: tuple[int, ...]
    model: Any  # onnx.ModelProto
    input_names: tuple[str, ...]
    inputs: tuple[Any, ...]  # numpy arrays


@dataclasses.dataclass
class ReductionResult:
    """What the reduction found: the smallest failing candidate and how it got there."""

    nodes_before: int
    candidate: Candidate
    complete: bool  # False: the budget ran out first (the smallest found so far)
    tested: int  # candidates checked (compiled, or answered by the store)
    elapsed_s: float
    budget_s: float | None
    inlined: int = 0  # If nodes replaced by the branch taken (frontends/onnx/subgraphs.py)
    bodies: int = 0  # Loop and Scan bodies copied out on their first iteration's values

    @property
    def nodes_after(self) -> int:
        """The reduced model's nodes, its subgraphs' included, the added Identity not."""
        return count_nodes(self.candidate.model.graph) - self.added_nodes

    @property
    def op_types(self) -> list[str]:
        return [n.op_type for n in self.candidate.model.graph.node]

    @property
    def added_nodes(self) -> int:
        """The ``Identity`` nodes the cut added after outputs without a shape."""
        return len(self.candidate.model.graph.node) - len(self.candidate.nodes)

    def summary(self) -> str:
        ops = ", ".join(self.op_types)
        added = (
            f"; the file has {len(self.op_types)}: {self.added_nodes} Identity after an "
            "output shape inference gives no shape, so its producer stays as it was"
            if self.added_nodes
            else ""
        )
        inlined = f"; {self.inlined} If node(s) inlined first" if self.inlined else ""
        if self.bodies:
            inlined += f"; {self.bodies} Loop/Scan body(ies) copied out on their first iteration"
        line = (
            f"reduced {self.nodes_before} nodes to {self.nodes_after} ({ops}{added}{inlined}) "
            f"in {self.elapsed_s:.1f} s, {self.tested} candidates checked (nodes counted "
            "with those of their subgraphs)"
        )
        if not self.complete:
            line += (
                f"; the budget of {self.budget_s:g} s ran out: this is the smallest failing "
                "graph found so far, not a minimal one (raise --reduce-budget)"
            )
        return line


@dataclasses.dataclass
class NumericsIsolation:
    """A numerics failure's first diverging node, run alone on the values it saw."""

    node: str
    op_type: str
    candidate: Candidate | None
    expected: list[Any]  # onnxruntime's outputs of the node (numpy arrays)
    shows_alone: bool | None  # None: the node could not be cut out or run alone
    detail: str

    def summary(self) -> str:
        where = f"node {self.op_type} {self.node!r}"
        if self.shows_alone is None:
            return f"the first diverging node, {where}: {self.detail}"
        if self.shows_alone:
            return (
                f"IREE alone shows the mismatch on the first diverging node, {where}: {self.detail}"
            )
        return (
            f"the first diverging node, {where}, matches onnxruntime when run alone on the "
            f"values it saw ({self.detail}): the mismatch needs the surrounding graph"
        )
