"""Delta debugging (Zeller and Hildebrandt's ddmin) with a deadline: the one search of
the ONNX graph reduction (frontends/onnx/reduce.py) and the MLIR op reduction
(frontends/mlir_reduce.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

__all__ = ["ddmin"]


class _Budget(Exception):
    pass


def ddmin(
    items: Sequence[int],
    fails: Callable[[tuple[int, ...]], bool],
    deadline: float | None = None,
    first: Sequence[tuple[int, ...]] = (),
    on_smaller: Callable[[tuple[int, ...]], None] | None = None,
) -> tuple[tuple[int, ...], bool]:
    """Delta debugging: a 1-minimal failing subset of ``items`` (which fail as a whole),
    and whether it finished before ``deadline`` (``time.monotonic()``); otherwise the
    smallest failing subset found so far. ``first``: subsets tried before the search."""
    smallest = tuple(items)

    def test(subset: tuple[int, ...]) -> bool:
        if deadline is not None and time.monotonic() > deadline:
            raise _Budget
        failed = fails(subset)
        if failed and len(subset) < len(smallest) and on_smaller is not None:
            on_smaller(subset)
        return failed

    try:
        for subset in first:
            if subset and len(subset) < len(smallest) and test(tuple(subset)):
                smallest = tuple(subset)
        n = 2
        current = smallest
        while len(current) >= 2:
            size = len(current)
            chunks = [current[i * size // n : (i + 1) * size // n] for i in range(n)]
            chunks = [c for c in chunks if c]
            for chunk in chunks:
                if test(chunk):
                    current, n = chunk, 2
                    break
            else:
                for chunk in chunks if len(chunks) > 2 else ():
                    rest = tuple(x for x in current if x not in chunk)
                    if test(rest):
                        current, n = rest, max(n - 1, 2)
                        break
                else:
                    if n >= size:
                        break
                    n = min(size, 2 * n)
            smallest = current
        return smallest, True
    except _Budget:
        return smallest, False
