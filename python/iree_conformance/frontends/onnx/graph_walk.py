"""Walking an ONNX graph forward from some values: the nodes that consume them, and on
through the outputs of the nodes the caller chooses to follow (each value once)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator

import onnx

__all__ = ["Consumers", "ValueWalk", "consumers_of"]

#: value name -> the (node, input position) pairs that read it.
Consumers = dict[str, list[tuple[onnx.NodeProto, int]]]


def consumers_of(graph: onnx.GraphProto) -> Consumers:
    """Every value's consumers, in graph order."""
    out: Consumers = defaultdict(list)
    for node in graph.node:
        for pos, name in enumerate(node.input):
            if name:
                out[name].append((node, pos))
    return out


class ValueWalk:
    """Iterating gives the (node, input position) consumers of each value reached, a value
    once; ``follow(node)`` reaches the node's outputs (breaking out of the loop ends the walk). Depth first
    unless ``breadth_first``; ``seen`` holds the values reached so far."""

    def __init__(
        self, consumers: Consumers, starts: Iterable[str], *, breadth_first: bool = False
    ) -> None:
        self._consumers = consumers
        self._frontier = list(starts)
        self._next = 0 if breadth_first else -1
        self.seen: set[str] = set()

    def __iter__(self) -> Iterator[tuple[onnx.NodeProto, int]]:
        while self._frontier:
            name = self._frontier.pop(self._next)
            if name in self.seen:
                continue
            self.seen.add(name)
            yield from self._consumers.get(name, [])

    def follow(self, node: onnx.NodeProto) -> None:
        self._frontier.extend(o for o in node.output if o)
