"""The quantization-grid rule: how far apart two results of quantized arithmetic may be.

An output computed from quantized values (a ``DequantizeLinear``, a ``QLinear*`` op, an
integer matmul) lies on a grid: its values are a scale times an integer. Two correct
implementations may round a value to neighbouring points of that grid (a different
accumulation order, a different rounding of the requantization), so they may differ
by a step or two where a float tolerance of 1e-4 expects agreement. Measured on real
models (docs/real-models.md): onnxruntime with its optimizations on vs off, IREE's
generic vs host CPU, differ by 0-2 steps; ``DEFAULT_GRID_STEPS`` is that bound.

A ``QuantGrid`` says where an output's grid is: its ``step`` in the space where the
grid is uniform, and the monotonic element-wise ``chain`` of ops (Sigmoid, Relu, ...)
between that space and the output. The bound for one element with expected value
``e`` is ``max |f(x +- k*step) - f(x)|`` where ``f`` is the chain and ``x = f^-1(e)``
(at a flat part of ``f``, Relu's zeros or Clip's bounds, the edge of the flat part,
where the change is largest): a sound per-element bound for a k-step difference
before the chain, computed in float64. The caller adds its usual float tolerance on
top, for the float evaluation of the chain itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

__all__ = [
    "DEFAULT_GRID_STEPS",
    "ELEMENTWISE_OPS",
    "Elementwise",
    "QuantGrid",
]

#: Steps of the grid two implementations may differ by (measured: docs/real-models.md).
DEFAULT_GRID_STEPS = 2

_Fn = Callable[[np.ndarray, tuple[float, ...]], np.ndarray]


def _sigmoid(x: np.ndarray, _p: tuple[float, ...]) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _logit(y: np.ndarray, _p: tuple[float, ...]) -> np.ndarray:
    tiny = np.finfo(np.float32).eps  # expected values are float32 or wider
    y = np.clip(y, tiny, 1.0 - tiny)
    return np.log(y) - np.log1p(-y)


def _softplus(x: np.ndarray, _p: tuple[float, ...]) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _softplus_inverse(y: np.ndarray, _p: tuple[float, ...]) -> np.ndarray:
    y = np.maximum(y, np.finfo(np.float32).tiny)
    with np.errstate(over="ignore"):
        return np.where(y > 30, y, np.log(np.expm1(np.minimum(y, 30))))


def _hard_sigmoid(x: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return np.clip(p[0] * x + p[1], 0.0, 1.0)


def _leaky(x: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return np.where(x >= 0, x, p[0] * x)


def _leaky_inverse(y: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return np.where(y >= 0, y, y / p[0])


# op name -> (forward, inverse onto the edge of a flat part). Every forward is monotonic.
ELEMENTWISE_OPS: dict[str, tuple[_Fn, _Fn]] = {
    "Sigmoid": (_sigmoid, _logit),
    "Tanh": (
        lambda x, p: np.tanh(x),
        lambda y, p: np.arctanh(np.clip(y, -1 + 1e-7, 1 - 1e-7)),
    ),
    "Relu": (lambda x, p: np.maximum(x, 0.0), lambda y, p: np.maximum(y, 0.0)),
    "Clip": (lambda x, p: np.clip(x, p[0], p[1]), lambda y, p: np.clip(y, p[0], p[1])),
    "LeakyRelu": (_leaky, _leaky_inverse),
    "HardSigmoid": (_hard_sigmoid, lambda y, p: (np.clip(y, 0.0, 1.0) - p[1]) / p[0]),
    "Exp": (
        lambda x, p: np.exp(x),
        lambda y, p: np.log(np.maximum(y, np.finfo(np.float32).tiny)),
    ),
    "Softplus": (_softplus, _softplus_inverse),
    "Neg": (lambda x, p: -x, lambda y, p: -y),
    "Scale": (lambda x, p: p[0] * x, lambda y, p: y / p[0]),  # Mul/Div by a scalar
    "Shift": (lambda x, p: x + p[0], lambda y, p: y - p[0]),  # Add/Sub a scalar
}


@dataclasses.dataclass(frozen=True)
class Elementwise:
    """One monotonic element-wise op after the grid: a name of ``ELEMENTWISE_OPS``."""

    op: str
    params: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.op not in ELEMENTWISE_OPS:
            raise ValueError(f"no quantization-grid rule for element-wise op {self.op!r}")

    def forward(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return ELEMENTWISE_OPS[self.op][0](x, self.params)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return ELEMENTWISE_OPS[self.op][1](y, self.params)


@dataclasses.dataclass(frozen=True)
class QuantGrid:
    """Where an output's values come from: a grid of spacing ``step``, then ``chain``.

    ``source`` names the op that put the values on the grid (for messages)."""

    step: float
    chain: tuple[Elementwise, ...] = ()
    source: str = ""

    @classmethod
    def from_plain(cls, data: QuantGrid | dict) -> QuantGrid:
        """A grid from itself or from ``dataclasses.asdict`` of one (a bundle's record)."""
        if isinstance(data, QuantGrid):
            return data
        chain = tuple(
            Elementwise(op["op"], tuple(float(x) for x in op.get("params", ())))
            for op in data.get("chain", ())
        )
        return cls(float(data["step"]), chain, str(data.get("source", "")))

    def then(self, op: Elementwise) -> QuantGrid:
        """The grid of this value after one more element-wise op."""
        return dataclasses.replace(self, chain=(*self.chain, op))

    def scaled(self, factor: float) -> QuantGrid:
        """The grid after multiplying by a constant (before any chain op): a wider step."""
        if self.chain:
            return self.then(Elementwise("Scale", (factor,)))
        return dataclasses.replace(self, step=self.step * abs(factor))

    def bound(self, expected: np.ndarray, steps: int) -> np.ndarray:
        """Per element: how far an output ``steps`` grid steps away from ``expected``
        (before the chain) may be from it, in output space (float64)."""
        y = np.asarray(expected, dtype=np.float64)
        if not self.chain:
            return np.full(y.shape, steps * self.step)
        x = y
        for op in reversed(self.chain):
            x = op.inverse(x)

        def through(v: np.ndarray) -> np.ndarray:
            for op in self.chain:
                v = op.forward(v)
            return v

        at = through(x)
        delta = steps * self.step
        with np.errstate(invalid="ignore"):
            worst = np.maximum(np.abs(through(x + delta) - at), np.abs(through(x - delta) - at))
        return np.where(np.isfinite(worst), worst, np.inf)

    def steps_apart(self, actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
        """Per element: how many grid steps apart the two values are before the chain
        (where the chain is flat the distance reads as 0: an estimate, for figures)."""
        a = np.asarray(actual, dtype=np.float64)
        e = np.asarray(expected, dtype=np.float64)
        for op in reversed(self.chain):
            a, e = op.inverse(a), op.inverse(e)
        with np.errstate(invalid="ignore"):
            return np.abs(a - e) / self.step

    def describe(self, steps: int) -> str:
        """``<= 2 steps of 0.00392 (DequantizeLinear 'y'), through Sigmoid``."""
        text = f"<= {steps} steps of {self.step:.3g}"
        if self.source:
            text += f" ({self.source})"
        if self.chain:
            text += ", through " + ", ".join(op.op for op in self.chain)
        return text
