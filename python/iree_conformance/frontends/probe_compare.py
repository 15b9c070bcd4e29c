"""The in-order comparison of a probe's values (every intermediate returned as an extra
output), shared by the StableHLO and torch numerics bisections: the first value the
final comparison would reject (``onnx.bisect.compare_tensor``: the same tolerance and
dtype rules), every earlier one having agreed."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from iree_conformance.frontends.onnx.bisect import compare_tensor

__all__ = ["ProbeAbout", "ProbeReport", "Runner", "first_divergence", "probe_report"]

#: Runs a probe: (program text, inputs) -> its outputs in result order.
Runner = Callable[[str, list[np.ndarray]], list[np.ndarray]]


@dataclasses.dataclass
class ProbeReport:
    """first: the first diverging value's description (None: all agree)."""

    first: str | None
    detail: str
    compared: int
    rtol: float | None  # None: each dtype's default (model.compare)
    atol: float | None
    unit: str  # "op result" / "FX node value"
    scope: str  # "of @main"
    against: str  # "the StableHLO interpreter"
    agree: str  # "its operands agree"

    def summary(self) -> str:
        values = f"{self.compared} {self.unit}{'' if self.compared == 1 else 's'}"
        if self.first is None:
            return (
                f"no {self.unit.rsplit(' ', 1)[0]} diverges at the case's tolerance "
                f"({_tolerance(self.rtol, self.atol)}): {values} {self.scope} compared "
                f"against {self.against}"
            )
        return (
            f"first diverging {self.first}: {self.detail} ({values} compared against "
            f"{self.against}; {self.agree})"
        )


@dataclasses.dataclass(frozen=True)
class ProbeAbout:
    """What a bisection's values are and what they are compared against (its report's words)."""

    unit: str
    scope: str
    against: str
    agree: str


def probe_report(
    labels: Sequence[str],
    expected: Sequence[np.ndarray],
    actual: Sequence[np.ndarray],
    returned: int,
    tolerance: tuple[float | None, float | None],
    about: ProbeAbout,
) -> ProbeReport:
    """The report of a probe run on both sides: its first divergence, if any."""
    rtol, atol = tolerance
    index, detail = first_divergence(labels, expected, actual, returned, rtol, atol)
    compared = len(labels) if index is None else index + 1
    first = None if index is None else labels[index]
    return ProbeReport(first, detail, compared, rtol, atol, **dataclasses.asdict(about))


def _tolerance(rtol: float | None, atol: float | None) -> str:
    if rtol is None and atol is None:
        return "each dtype's default"
    shown = ["default" if v is None else f"{v:g}" for v in (rtol, atol)]
    return f"rtol {shown[0]}, atol {shown[1]}"


def first_divergence(
    labels: Sequence[str],
    expected: Sequence[np.ndarray],
    actual: Sequence[np.ndarray],
    returned: int,
    rtol: float | None,
    atol: float | None,
) -> tuple[int | None, str]:
    """(the index in ``labels`` of the first value that diverges, or None; its detail).
    Both sides hold the program's own ``returned`` outputs, then one value per label."""
    total = returned + len(labels)
    for side, values in (("the reference", expected), ("IREE", actual)):
        if len(values) != total:
            raise ValueError(f"the probe gave {len(values)} outputs on {side}, not {total}")
    for index in range(len(labels)):
        want = np.asarray(expected[returned + index])
        got = np.asarray(actual[returned + index])
        reason, max_abs, max_rel, count = compare_tensor(want, got, rtol, atol)
        if reason is None:
            continue
        if reason == "values":
            return index, (
                f"{count}/{want.size} elements differ, max abs error {max_abs:.3g}, "
                f"max rel error {max_rel:.3g}"
            )
        return index, (
            f"{reason} differs (expected {want.shape} {want.dtype}, got {got.shape} {got.dtype})"
        )
    return None, ""
