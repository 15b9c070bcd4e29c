"""Turns a rewritten function's (actual, expected) pairs into comparisons."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..compare import Tolerance
from ..stablehlo_checks import ALL_TRUE, CLOSE, EXACT, FALSE, TRUE


def checks_from_pairs(pairs: list[dict[str, Any]], outputs: list[np.ndarray]):
    """One (actual, expected, tolerance) comparison per check op."""
    if not pairs:
        raise ValueError("the module reported no checks")
    checks = []
    for pair in pairs:
        actual = outputs[pair["actual"]]
        kind = pair["kind"]
        if kind in (EXACT, CLOSE):
            expected = outputs[pair["expected"]]
            tol = Tolerance(0.0, 0.0) if kind == EXACT else Tolerance(pair.get("rtol"), pair.get("atol"), pair.get("max_ulp"))
        elif kind in (TRUE, ALL_TRUE):
            expected, tol = np.ones_like(actual), Tolerance(0.0, 0.0)
        elif kind == FALSE:
            expected, tol = np.zeros_like(actual), Tolerance(0.0, 0.0)
        else:
            raise ValueError(f"unknown check kind {kind!r}")
        checks.append(([actual], [expected], tol))
    return checks
