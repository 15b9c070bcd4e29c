"""Turns the checks a program executed into comparisons."""

from __future__ import annotations

from typing import Any

import numpy as np

from iree_conformance.frontends.stablehlo.checks import ALL_TRUE, CLOSE, EXACT, FALSE, TRUE
from iree_conformance.model.compare import Check, Tolerance


def checks_from_records(
    sites: list[dict[str, Any]], records: list[tuple[int, list[np.ndarray]]], source: str = ""
) -> list[Check]:
    """One comparison per executed check, labelled with the check op and its line."""
    if not records:
        raise ValueError("the function executed no check op: nothing was checked")
    by_site = {s["site"]: s for s in sites}
    checks: list[Check] = []
    for count, (site_id, values) in enumerate(records):
        site = by_site[site_id]
        kind, actual = site["kind"], values[0]
        if kind in (EXACT, CLOSE):
            expected = values[1]
            tol = (
                Tolerance(0.0, 0.0)
                if kind == EXACT
                else Tolerance(site.get("rtol"), site.get("atol"), site.get("max_ulp"))
            )
        elif kind in (TRUE, ALL_TRUE):
            # expect_true passes on any non-zero i32, expect_all_true on all non-zero elements.
            actual, expected, tol = (
                (np.asarray(actual) != 0),
                np.ones(np.shape(actual), bool),
                Tolerance(0.0, 0.0),
            )
        elif kind == FALSE:
            actual, expected, tol = (
                (np.asarray(actual) != 0),
                np.zeros(np.shape(actual), bool),
                Tolerance(0.0, 0.0),
            )
        else:
            raise ValueError(f"unknown check kind {kind!r}")
        where = f"{site['line']}:{site['column']}" if site.get("line") is not None else "?"
        label = f"check {count} ({site['op']} at {source or 'line'}:{where} in @{site['function']})"
        checks.append(Check([actual], [expected], tol, label, site.get("line")))
    return checks
