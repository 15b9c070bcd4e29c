"""Dtype-aware comparison of actual outputs against expected outputs.

Rules: shapes and dtypes must match; integer and boolean outputs must be exactly equal;
floating and complex outputs are close when ``|a - e| <= atol + rtol * |e|`` elementwise
(or, in ULP mode, for StableHLO's ``check.expect_close``, when they are at most
``max_ulp`` units in the last place apart), and NaN and infinity positions (and infinity
signs) must match. An output that comes out of quantized arithmetic (``Tolerance.grids``,
see ``model.quantization``) may also be up to k steps of its grid away.

Each output's metrics name the rule that judged it (``rule``: ``exact``, ``tolerance``,
``ulp`` or ``quantization-grid``). The maximum relative error is taken over the elements
whose expected magnitude is above atol only (near an exact zero a relative error says
nothing): ``rel_error_scope`` says so.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from iree_conformance.model.quantization import DEFAULT_GRID_STEPS, QuantGrid

# (rtol, atol) per floating dtype; a case or a manifest may override them.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
    "float32": (1e-5, 1e-6),
    "float64": (1e-7, 1e-9),
    "complex64": (1e-5, 1e-6),
    "complex128": (1e-7, 1e-9),
}
FALLBACK_TOLERANCE = (1e-5, 1e-6)


@dataclasses.dataclass(frozen=True)
class Tolerance:
    rtol: float | None = None
    atol: float | None = None
    max_ulp: int | None = None  # ULP mode: overrides rtol/atol for real and complex floats
    # Per output (by index): its quantization grid, or None (strict tolerance).
    grids: tuple[QuantGrid | None, ...] = ()
    grid_steps: int | None = None  # k of the grid rule; None: DEFAULT_GRID_STEPS

    def __post_init__(self) -> None:
        # A bundle's record holds dataclasses.asdict of a Tolerance: grids come back as dicts.
        grids = tuple(None if g is None else QuantGrid.from_plain(g) for g in self.grids)
        object.__setattr__(self, "grids", grids)

    def merged_over(self, base: Tolerance) -> Tolerance:
        """This tolerance's fields where set, else base's (a manifest override over a case's)."""
        return Tolerance(
            self.rtol if self.rtol is not None else base.rtol,
            self.atol if self.atol is not None else base.atol,
            self.max_ulp if self.max_ulp is not None else base.max_ulp,
            self.grids or base.grids,
            self.grid_steps if self.grid_steps is not None else base.grid_steps,
        )

    def grid(self, index: int) -> QuantGrid | None:
        """The quantization grid of output ``index``, if it has one."""
        return self.grids[index] if index < len(self.grids) else None

    @property
    def steps(self) -> int:
        return self.grid_steps if self.grid_steps is not None else DEFAULT_GRID_STEPS

    def resolve(self, dtype: np.dtype) -> tuple[float, float]:
        rtol, atol = DEFAULT_TOLERANCES.get(np.dtype(dtype).name, FALLBACK_TOLERANCE)
        return (
            self.rtol if self.rtol is not None else rtol,
            self.atol if self.atol is not None else atol,
        )


@dataclasses.dataclass
class Comparison:
    ok: bool
    messages: list[str]
    metrics: dict[str, Any]
    failed: list[int] = dataclasses.field(default_factory=list)  # indices of failing checks


def _is_inexact(dtype: np.dtype) -> bool:
    """Floating and complex dtypes, including ml_dtypes' bfloat16 and float8 types."""
    return dtype.kind in "fc" or dtype.name.startswith(("float", "bfloat"))


_INT_OF_WIDTH = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _ordered_bits(x: np.ndarray) -> np.ndarray:
    """Float bits mapped to integers that order like the floats (both zeros are 0)."""
    bits = _INT_OF_WIDTH[x.dtype.itemsize]
    raw = np.ascontiguousarray(x).view(bits).astype(np.int64)
    return np.where(raw < 0, -(raw - np.iinfo(bits).min), raw)


def _ulp_distance(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "c":
        return np.maximum(
            _ulp_distance(a.real.copy(), e.real.copy()), _ulp_distance(a.imag.copy(), e.imag.copy())
        )
    return np.abs(_ordered_bits(a).astype(np.float64) - _ordered_bits(e).astype(np.float64))


def as_declared_unsigned(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """The IREE runtime returns integers signless, as the signed numpy type of their width.

    When the expected output (which carries the program's declared type) is unsigned and
    the actual one is the signed type of the same width, the bits are the same value:
    view them as the declared type. Every other dtype difference stays a mismatch.
    """
    if (
        expected.dtype.kind == "u"
        and actual.dtype.kind == "i"
        and actual.dtype.itemsize == expected.dtype.itemsize
    ):
        return actual.view(expected.dtype)
    return actual


def compare_arrays(
    index: int, actual: np.ndarray, expected: np.ndarray, tol: Tolerance
) -> tuple[list[str], dict[str, Any]]:
    """Returns (problems, metrics) for one output: the one rule for final outputs and
    for the numerics bisection's intermediate tensors alike (unsigned results handed
    back as the signed type of their width count as the declared type)."""
    expected = np.asarray(expected)
    actual = as_declared_unsigned(np.asarray(actual), expected)
    metrics: dict[str, Any] = {
        "max_abs_error": 0.0,
        "max_rel_error": 0.0,
        "mismatch_count": 0,
        "first_mismatch_index": None,
        "compared_elements": 0,
    }
    if actual.shape != expected.shape:
        return [
            f"output {index}: shape {list(actual.shape)} != expected {list(expected.shape)}"
        ], metrics
    if actual.dtype != expected.dtype:
        return [f"output {index}: dtype {actual.dtype} != expected {expected.dtype}"], metrics
    metrics["compared_elements"] = int(actual.size)
    grid = tol.grid(index)
    if grid is not None:
        metrics["rule"], metrics["grid"] = "quantization-grid", grid.describe(tol.steps)
    if actual.size == 0:
        metrics.setdefault("rule", "exact" if not _is_inexact(expected.dtype) else "tolerance")
        return [], metrics
    if not _is_inexact(expected.dtype):
        with np.errstate(over="ignore", invalid="ignore"):
            e = expected.astype(np.float64)
            diff = np.abs(actual.astype(np.float64) - e)
            rel = np.where(e != 0, diff / np.abs(np.where(e != 0, e, 1.0)), 0.0)
        if grid is not None:
            mismatch = diff > grid.bound(e, tol.steps)
            metrics["max_grid_steps"] = float(diff.max()) / grid.step
        else:
            mismatch = actual != expected
            metrics["rule"] = "exact"
        metrics["max_abs_error"] = float(diff.max())
        metrics["max_rel_error"] = float(rel.max())
        metrics["rel_error_scope"] = "elements with expected != 0"
    else:
        wide = np.complex128 if "c" in (actual.dtype.kind, expected.dtype.kind) else np.float64
        a, e = actual.astype(wide), expected.astype(wide)
        rtol, atol = tol.resolve(expected.dtype)
        a_nan, e_nan = np.isnan(a), np.isnan(e)
        a_inf, e_inf = np.isinf(a), np.isinf(e)
        finite = ~(a_nan | e_nan | a_inf | e_inf)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.where(finite, np.abs(a - e), 0.0)
            # Relative error only where |expected| > atol: near an exact zero it says nothing.
            scoped = finite & (np.abs(e) > atol)
            rel = np.where(scoped, diff / np.where(scoped, np.abs(e), 1.0), 0.0)
        mismatch = (a_nan != e_nan) | (a_inf != e_inf) | (a_inf & e_inf & (a != e))
        metrics["max_abs_error"] = float(diff.max())
        metrics["max_rel_error"] = float(rel.max())
        metrics["rel_error_scope"] = f"elements with |expected| > atol ({atol:g})"
        if (
            tol.max_ulp is not None
            and actual.dtype.itemsize // (2 if actual.dtype.kind == "c" else 1) in _INT_OF_WIDTH
        ):
            ulps = np.where(finite, _ulp_distance(actual, expected), 0.0)
            mismatch |= finite & (ulps > tol.max_ulp)
            metrics["max_ulp_error"], metrics["max_ulp"] = float(ulps.max()), tol.max_ulp
            metrics.setdefault("rule", "ulp")
        else:
            strict = atol + rtol * np.abs(e)
            allowed = strict
            if grid is not None and wide is np.float64:
                allowed = strict + grid.bound(np.where(finite, e.real, 0.0), tol.steps)
                # Steps apart, over the elements the strict tolerance alone would reject.
                with np.errstate(invalid="ignore"):
                    needed = finite & (diff > strict)
                apart = np.where(needed, grid.steps_apart(a.real, e.real), 0.0)
                metrics["max_grid_steps"] = round(float(np.nanmax(apart)), 3)
            else:
                metrics["rule"] = "tolerance"
            with np.errstate(invalid="ignore", over="ignore"):
                mismatch |= finite & (diff > allowed)
            metrics["rtol"], metrics["atol"] = rtol, atol
    count = int(np.count_nonzero(mismatch))
    metrics["mismatch_count"] = count
    if count:
        first = tuple(int(i) for i in np.argwhere(mismatch)[0])
        metrics["first_mismatch_index"] = list(first)
        rule = f" (quantization grid: {metrics['grid']})" if grid is not None else ""
        return [
            f"output {index}: {count} of {actual.size} elements differ{rule}; first at "
            f"{list(first)}: actual {plain(actual[first])}, expected {plain(expected[first])}; "
            f"max abs error {metrics['max_abs_error']:.6g}, max rel error "
            f"{metrics['max_rel_error']:.3g} (over {metrics['rel_error_scope']})"
        ], metrics
    return [], metrics


def plain(value: Any) -> str:
    """A value as a person writes it: ``nan``, ``0.0898``, ``(1+2j)``, ``True``, not
    numpy's ``np.float32(0.0898)`` repr (numpy 2). numpy's str of a scalar is already
    the shortest text that reads back as the same value of its dtype."""
    return str(value)


def empty_metrics(outputs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The metrics of nothing compared yet (the start of an aggregation)."""
    return {
        "max_abs_error": 0.0,
        "max_rel_error": 0.0,
        "mismatch_count": 0,
        "compared_elements": 0,
        "first_mismatch_index": None,
        "outputs": list(outputs or []),
    }


def accumulate_metrics(
    total: dict[str, Any], part: dict[str, Any], output: int | None = None
) -> dict[str, Any]:
    """Folds one comparison's metrics into total: the one aggregation rule (worst errors,
    summed counts, the first mismatch seen, output descriptions appended). output: the
    index of the output part describes, recorded with its first mismatch."""
    total["max_abs_error"] = max(total["max_abs_error"], part.get("max_abs_error", 0.0))
    total["max_rel_error"] = max(total["max_rel_error"], part.get("max_rel_error", 0.0))
    if "rel_error_scope" in part:
        total.setdefault("rel_error_scope", part["rel_error_scope"])
    total["mismatch_count"] += part.get("mismatch_count", 0)
    total["compared_elements"] += part.get("compared_elements", 0)
    if "max_ulp_error" in part:
        total["max_ulp_error"] = max(total.get("max_ulp_error", 0.0), part["max_ulp_error"])
    if part.get("first_mismatch_index") is not None and total["first_mismatch_index"] is None:
        total["first_mismatch_index"] = part["first_mismatch_index"]
        if output is not None:
            total["first_mismatch_output"] = output
        elif "first_mismatch_output" in part:
            total["first_mismatch_output"] = part["first_mismatch_output"]
    total["outputs"] += part.get("outputs", [])
    return total


def compare_outputs(
    actual: list[np.ndarray], expected: list[np.ndarray], tolerance: Tolerance = Tolerance()
) -> Comparison:
    """Compares every output; metrics aggregate the worst figures over all outputs."""
    expected = [np.asarray(e) for e in expected]
    actual = [as_declared_unsigned(np.asarray(a), e) for a, e in zip(actual, expected)] + [
        np.asarray(a) for a in actual[len(expected) :]
    ]
    metrics = empty_metrics([{"dtype": a.dtype.name, "shape": list(a.shape)} for a in actual])
    if len(actual) != len(expected):
        return Comparison(False, [f"{len(actual)} outputs != {len(expected)} expected"], metrics)
    messages: list[str] = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        problems, m = compare_arrays(i, a, e, tolerance)
        messages += problems
        for key in ("rule", "grid", "max_grid_steps"):  # which rule judged this output
            if key in m:
                metrics["outputs"][i][key] = m[key]
        accumulate_metrics(metrics, m, output=i)
    return Comparison(not messages, messages, metrics)


@dataclasses.dataclass(frozen=True)
class Check:
    """One comparison of a case: what ran against what was expected (one per input set,
    or one per check op)."""

    actual: list[np.ndarray]
    expected: list[np.ndarray]
    tolerance: Tolerance
    label: str | None = None  # names it in messages (a check op's location)
    line: int | None = None  # its source line (a check op's): where an annotation points


def compare_checks(checks: list[Check], tolerance_override: Tolerance | None = None) -> Comparison:
    """Compares every check of a case. Messages are prefixed with the check's label (or
    ``check N:`` when there are several); metrics aggregate over all of them with
    ``accumulate_metrics``. tolerance_override: a manifest's, merged over each check's.
    Used by the engine's after-run steps (engine/after_run.py), for the pipeline and
    run-bundle alike."""
    checks = list(checks)
    messages: list[str] = []
    failed: list[int] = []
    metrics = empty_metrics()
    for index, check in enumerate(checks):
        tolerance = check.tolerance
        tol = tolerance_override.merged_over(tolerance) if tolerance_override else tolerance
        comparison = compare_outputs(check.actual, check.expected, tol)
        label = check.label
        prefix = f"{label}: " if label else f"check {index}: " if len(checks) > 1 else ""
        messages += [prefix + m for m in comparison.messages]
        if comparison.messages:
            failed.append(index)
        accumulate_metrics(metrics, comparison.metrics)
    return Comparison(not messages, messages, metrics, failed)
