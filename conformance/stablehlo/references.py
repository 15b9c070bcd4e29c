"""Inputs and numpy references of the bundled StableHLO corpus, one function per case.

``@reference("add_f32", inputs=[...])`` registers a case: its seeded inputs (the arguments
of ``@main`` in ``cases/add_f32.mlir``) and a function that recomputes the program's outputs
from them in float64 (integers in int64 or exact Python integers). ``generate.py`` casts
each output once to the result type that ``@main`` declares.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Reference:
    """One case's inputs and the function computing its expected outputs from them."""

    name: str
    inputs: list[np.ndarray]
    compute: Callable[..., list] | None  # None: the expected outputs come from the interpreter


REFERENCES: dict[str, Reference] = {}


def _register(name: str, inputs: list, compute: Callable[..., list] | None) -> None:
    if name in REFERENCES:
        raise ValueError(f"duplicate case name {name}")
    REFERENCES[name] = Reference(name, [np.asarray(x) for x in inputs], compute)


def reference(name: str, inputs: list) -> Callable[[Callable[..., list]], Callable[..., list]]:
    """Decorator: the function computes case ``name``'s outputs from ``inputs``."""

    def register(compute: Callable[..., list]) -> Callable[..., list]:
        _register(name, inputs, compute)
        return compute

    return register


def interpreter_inputs(name: str, inputs: list) -> None:
    """Inputs of a case whose expected outputs come from the StableHLO interpreter
    (``reference = "interpreter"`` in corpus.toml)."""
    _register(name, inputs, None)


# =============================================================================================
# Inputs and shared helpers.


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def f64(*arrays: np.ndarray) -> list[np.ndarray]:
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def i64(*arrays: np.ndarray) -> list[np.ndarray]:
    return [np.asarray(a, dtype=np.int64) for a in arrays]


def wrap_int(values: np.ndarray, dtype: type) -> np.ndarray:
    """Two's-complement wrap of exact integers (object or int64 arrays) into dtype."""
    bits = np.iinfo(dtype).bits
    obj = np.asarray(values, dtype=object)
    mod = 1 << bits
    wrapped = np.vectorize(lambda v: ((int(v) + (mod >> 1)) % mod) - (mod >> 1), otypes=[object])(
        obj
    )
    return wrapped.astype(dtype)


def uniform(seed: int, shape, lo: float, hi: float, dtype=np.float32) -> np.ndarray:
    return rng(seed).uniform(lo, hi, size=shape).astype(dtype)


def normal(seed: int, shape, dtype=np.float32) -> np.ndarray:
    return rng(seed).standard_normal(size=shape).astype(dtype)


def dyadic(seed: int, shape, lo: int = -16, hi: int = 16, denom: int = 8) -> np.ndarray:
    """Random multiples of 1/denom: sums and small products of these are exact in f32."""
    return (rng(seed).integers(lo * denom, hi * denom + 1, size=shape) / denom).astype(np.float32)


def ints(seed: int, shape, lo: int, hi: int, dtype=np.int32) -> np.ndarray:
    return rng(seed).integers(lo, hi, size=shape, endpoint=True).astype(dtype)


# =============================================================================================
# Seed programs.


@reference(
    "seed_cos_sin",
    inputs=[np.array([1.0, 2.0, 3.0, 4.0], np.float32), np.array([1, -1, 1, -1], np.int64)],
)
def seed_cos_sin(a, b):
    return [np.cos(f64(a)[0]) + np.sin(f64(b)[0])]


def softmax_ref(x: np.ndarray, axis: int = -1) -> list[np.ndarray]:
    (x,) = f64(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return [e / e.sum(axis=axis, keepdims=True)]


@reference("seed_softmax_4", inputs=[np.array([1.0, 2.0, -1.0, -1.5], np.float32)])
def seed_softmax_4(x):
    return softmax_ref(x)


@reference("seed_softmax_100000", inputs=[normal(100000, (100000,)) * np.float32(3.0)])
def seed_softmax_100000(x):
    return softmax_ref(x)


# =============================================================================================
# Elementwise arithmetic.


@reference("add_f32", inputs=[normal(1, (3, 4)), normal(2, (3, 4))])
def add_f32(a, b):
    return [f64(a)[0] + f64(b)[0]]


@reference(
    "add_i64",
    inputs=[
        np.array([1 << 40, -(1 << 40), 123456789012, -5, 0, (1 << 62) - 1], np.int64),
        np.array([1 << 35, 7, -123456789012, 5, -(1 << 50), -((1 << 62) - 1)], np.int64),
    ],
)
def add_i64(a, b):
    return [np.array([int(x) + int(y) for x, y in zip(a, b, strict=True)], dtype=object)]


@reference("subtract_i32", inputs=[ints(3, (2, 5), -1000, 1000), ints(4, (2, 5), -1000, 1000)])
def subtract_i32(a, b):
    return [i64(a)[0] - i64(b)[0]]


@reference(
    "subtract_f16",
    inputs=[uniform(5, (16,), -8, 8, np.float16), uniform(6, (16,), -8, 8, np.float16)],
)
def subtract_f16(a, b):
    return [f64(a)[0] - f64(b)[0]]


@reference(
    "multiply_f16",
    inputs=[uniform(7, (16,), -4, 4, np.float16), uniform(8, (16,), -4, 4, np.float16)],
)
def multiply_f16(a, b):
    return [f64(a)[0] * f64(b)[0]]


@reference(
    "multiply_i32_wraparound",
    inputs=[
        np.array([65536, 2147483647, -2147483647, 123456, -3, 46341], np.int32),
        np.array([65536, 2, 3, 654321, 7, 46341], np.int32),
    ],
)
def multiply_i32_wraparound(a, b):
    return [
        wrap_int(np.array([int(x) * int(y) for x, y in zip(a, b, strict=True)], object), np.int32)
    ]


@reference(
    "divide_f32",
    inputs=[
        normal(9, (4, 4)),
        uniform(10, (4, 4), 0.5, 4.0) * np.where(normal(11, (4, 4)) < 0, -1, 1).astype(np.float32),
    ],
)
def divide_f32(a, b):
    return [f64(a)[0] / f64(b)[0]]


def trunc_div(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer division rounding toward zero, and the matching remainder (exact, Python ints)."""
    q, r = [], []
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        quotient = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        q.append(quotient)
        r.append(x - y * quotient)
    return np.array(q, dtype=object), np.array(r, dtype=object)


@reference(
    "divide_remainder_i32",
    inputs=[
        np.array([7, -7, 7, -7, 100, -1, 0, 2147483647], np.int32),
        np.array([2, 2, -2, -2, 7, 3, 5, -10], np.int32),
    ],
)
def divide_remainder_i32(a, b):
    return list(trunc_div(a, b))


@reference(
    "remainder_f32",
    inputs=[
        np.array([5.5, -5.5, 5.5, -5.5, 10.0, 0.75, -3.0, 7.25], np.float32),
        np.array([2.0, 2.0, -2.0, -2.0, 2.5, 0.5, 4.0, 1.5], np.float32),
    ],
)
def remainder_f32(a, b):
    return [np.fmod(f64(a)[0], f64(b)[0])]


@reference("max_min_f32", inputs=[normal(12, (2, 8)), normal(13, (2, 8))])
def max_min_f32(a, b):
    return [np.maximum(*f64(a, b)), np.minimum(*f64(a, b))]


@reference(
    "max_min_i64",
    inputs=[
        np.array([1 << 40, -(1 << 40), 5, -5, (1 << 33) + 1, 0], np.int64),
        np.array([(1 << 40) + 1, -(1 << 41), -5, 5, 1 << 33, -1], np.int64),
    ],
)
def max_min_i64(a, b):
    return [np.maximum(*i64(a, b)), np.minimum(*i64(a, b))]


@reference(
    "abs_negate_i32",
    inputs=[np.array([0, 1, -1, 17, -17, 2147483647, -2147483647, -1000000], np.int32)],
)
def abs_negate_i32(a):
    return [np.abs(i64(a)[0]), -i64(a)[0]]


@reference("abs_negate_f16", inputs=[uniform(14, (12,), -100, 100, np.float16)])
def abs_negate_f16(a):
    return [np.abs(f64(a)[0]), -f64(a)[0]]


@reference(
    "exp_log_f32",
    inputs=[uniform(15, (32,), -10, 10), np.exp(uniform(16, (32,), -6.9, 6.9)).astype(np.float32)],
)
def exp_log_f32(a, b):
    return [np.exp(f64(a)[0]), np.log(f64(b)[0])]


@reference("tanh_f32", inputs=[uniform(17, (4, 8), -5, 5)])
def tanh_f32(a):
    return [np.tanh(f64(a)[0])]


@reference("exp_tanh_f16", inputs=[uniform(18, (16,), -4, 4, np.float16)])
def exp_tanh_f16(a):
    return [np.exp(f64(a)[0]), np.tanh(f64(a)[0])]


@reference("sqrt_rsqrt_f32", inputs=[np.exp(uniform(19, (24,), -4.6, 4.6)).astype(np.float32)])
def sqrt_rsqrt_f32(a):
    return [np.sqrt(f64(a)[0]), 1.0 / np.sqrt(f64(a)[0])]


@reference(
    "floor_ceil_f32",
    inputs=[
        np.array([0.5, -0.5, 1.5, -1.5, 2.0, -2.0, 2.7, -2.7, 1e6 + 0.25, -0.0001], np.float32)
    ],
)
def floor_ceil_f32(a):
    return [np.floor(f64(a)[0]), np.ceil(f64(a)[0])]


@reference(
    "round_sign_f32",
    inputs=[np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 0.0, 3.0], np.float32)],
)
def round_sign_f32(a):
    return [
        np.round(f64(a)[0]),
        np.sign(f64(a)[0]) * np.floor(np.abs(f64(a)[0]) + 0.5),
        np.sign(f64(a)[0]),
    ]


@reference("power_f32", inputs=[uniform(20, (16,), 0.1, 4.0), uniform(21, (16,), -3.0, 3.0)])
def power_f32(a, b):
    return [np.power(*f64(a, b))]


@reference(
    "power_i32",
    inputs=[
        np.array([2, -3, 5, 0, 1, -1, 7, 10], np.int32),
        np.array([10, 3, 0, 4, 30, 7, 5, 9], np.int32),
    ],
)
def power_i32(a, b):
    return [np.array([int(x) ** int(y) for x, y in zip(a, b, strict=True)], dtype=object)]


@reference("unary_misc_f32", inputs=[uniform(22, (16,), -0.9, 3.0)])
def unary_misc_f32(a):
    return [
        1.0 / (1.0 + np.exp(-f64(a)[0])),
        np.log1p(f64(a)[0]),
        np.expm1(f64(a)[0]),
        np.cbrt(f64(a)[0]),
    ]


@reference("atan2_f32", inputs=[normal(23, (12,)), normal(24, (12,))])
def atan2_f32(a, b):
    return [np.arctan2(*f64(a, b))]


# =============================================================================================
# Logical / bitwise / compare.

BOOL4 = (np.array([False, False, True, True]), np.array([False, True, False, True]))


@reference("logical_i1", inputs=list(BOOL4))
def logical_i1(a, b):
    return [a & b, a | b, a ^ b, ~a]


@reference(
    "bitwise_i32",
    inputs=[ints(25, (10,), -(2**31), 2**31 - 1), ints(26, (10,), -(2**31), 2**31 - 1)],
)
def bitwise_i32(a, b):
    return [
        np.bitwise_and(*i64(a, b)),
        np.bitwise_or(*i64(a, b)),
        np.bitwise_xor(*i64(a, b)),
        np.invert(i64(a)[0]),
    ]


def shift_ref(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    left, arith, logical = [], [], []
    for x, s in zip(a.tolist(), b.tolist(), strict=True):
        u = x & 0xFFFFFFFF
        in_range = 0 <= s < 32
        left.append((u << s) & 0xFFFFFFFF if in_range else 0)
        arith.append(x >> s if in_range else (-1 if x < 0 else 0))
        logical.append(u >> s if in_range else 0)
    return [wrap_int(np.array(v, object), np.int32) for v in (left, arith, logical)]


@reference(
    "shifts_i32",
    inputs=[
        np.array(
            [1, -1, 12345, -12345, 2147483647, -2147483648, 7, -8, 255, -256, 1, -1], np.int32
        ),
        np.array([0, 1, 4, 4, 31, 31, 3, 3, 24, 8, 31, 30], np.int32),
    ],
)
def shifts_i32(a, b):
    return shift_ref(a, b)


@reference(
    "shifts_i32_out_of_range",
    inputs=[
        np.array(
            [1, -1, 12345, -12345, 2147483647, -2147483648, 7, -8, 255, -256, 1, -1], np.int32
        ),
        np.array([32, 32, 33, 40, 100, 64, -1, -1, 2147483647, -2147483648, 32, 63], np.int32),
    ],
)
def shifts_i32_out_of_range(a, b):
    return shift_ref(a, b)


DIRECTIONS = ["EQ", "NE", "LT", "LE", "GT", "GE"]
NP_COMPARE = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}


_cmp_a = dyadic(27, (12,), -2, 2, 2)
_cmp_b = _cmp_a.copy()
_cmp_b[::2] = dyadic(28, (6,), -2, 2, 2)


@reference("compare_f32", inputs=[_cmp_a, _cmp_b])
def compare_f32(a, b):
    return [NP_COMPARE[d](*f64(a, b)) for d in DIRECTIONS]


@reference(
    "compare_i64",
    inputs=[
        np.array([1 << 40, -(1 << 40), 5, -5, 1 << 33, 0], np.int64),
        np.array([(1 << 40) + 1, -(1 << 40), -5, 5, 1, 0], np.int64),
    ],
)
def compare_i64(a, b):
    return [NP_COMPARE[d](*i64(a, b)) for d in ["LT", "GE", "NE", "EQ"]]


@reference("compare_i32_select", inputs=[ints(29, (3, 4), -50, 50), ints(30, (3, 4), -50, 50)])
def compare_i32_select(a, b):
    return [np.where(a > b, a, b)]


# =============================================================================================
# Convert.


@reference(
    "convert_f32_i32",
    inputs=[
        np.array([0.0, 0.9, -0.9, 1.5, -1.5, 2.5, -2.5, 123456.75, -7654321.0, 1e9], np.float32),
        np.array([0, -1, 16777217, 16777219, -16777219, 2147483647], np.int32),
    ],
)
def convert_f32_i32(a, b):
    return [np.trunc(f64(a)[0]).astype(np.int64), f64(b)[0]]


@reference(
    "convert_i64_f32",
    inputs=[
        np.array(
            [0, 1, -1, 16777217, 16777219, -(1 << 40) - 3, (1 << 52) + 12345, 1 << 62], np.int64
        )
    ],
)
def convert_i64_f32(a):
    return [np.array([float(int(x)) for x in a])]  # exact below 2^53; 2^62 is a power of 2


@reference(
    "convert_f32_f16",
    inputs=[
        np.array(
            [0.0, 1.0, -2.5, 0.1, 3.14159265, 1.0009765625, 65504.0, 70000.0, -70000.0, 3e-6],
            np.float32,
        )
    ],
)
def convert_f32_f16(a):
    return [f64(a)[0]]


@reference("convert_i1_f32", inputs=[np.array([True, False, True, True, False, False])])
def convert_i1_f32(a):
    return [a.astype(np.float64), a.astype(np.int64)]


@reference(
    "convert_f16_f32_i32_i64",
    inputs=[
        uniform(31, (8,), -1000, 1000, np.float16),
        np.array([-2147483648, -1, 0, 2147483647], np.int32),
    ],
)
def convert_f16_f32_i32_i64(a, b):
    return [f64(a)[0], i64(b)[0]]


# =============================================================================================
# Shapes and data movement.


@reference(
    "broadcast_in_dim",
    inputs=[normal(32, (4,)), normal(33, (3,)), np.array(2.5, np.float32), normal(34, (1, 4))],
)
def broadcast_in_dim(r, c, s, m):
    return [
        np.broadcast_to(r, (3, 4)),
        np.broadcast_to(c[:, None], (3, 4)),
        np.broadcast_to(s, (2, 3)),
        np.broadcast_to(m, (3, 4)),
    ]


@reference("reshape", inputs=[np.arange(24, dtype=np.int32).reshape(2, 3, 4) * 3 - 20])
def reshape(a):
    return [a.reshape(6, 4), a.reshape(4, 3, 2)]


@reference("transpose_3d", inputs=[normal(35, (2, 3, 4)), normal(36, (3, 5))])
def transpose_3d(a, b):
    return [np.transpose(a, (2, 0, 1)), b.T]


@reference("concatenate", inputs=[normal(37, (2, 1)), normal(38, (2, 3)), normal(39, (2, 2))])
def concatenate(a, b, c):
    return [np.concatenate([a, b, c], axis=1), np.concatenate([b, b], axis=0)]


@reference("slice_strided", inputs=[np.arange(48, dtype=np.int32).reshape(6, 8)])
def slice_strided(a):
    return [a[1:5:2, 1:8:3], a[0:6, 7:8]]


def dynamic_slice_ref(a: np.ndarray, i: np.ndarray, j: np.ndarray) -> list[np.ndarray]:
    si = min(max(int(i), 0), a.shape[0] - 2)
    sj = min(max(int(j), 0), a.shape[1] - 3)
    return [a[si : si + 2, sj : sj + 3]]


@reference(
    "dynamic_slice", inputs=[normal(40, (5, 6)), np.array(2, np.int32), np.array(1, np.int32)]
)
def dynamic_slice(a, i, j):
    return dynamic_slice_ref(a, i, j)


@reference(
    "dynamic_slice_clamped",
    inputs=[normal(41, (5, 6)), np.array(7, np.int32), np.array(-3, np.int32)],
)
def dynamic_slice_clamped(a, i, j):
    return dynamic_slice_ref(a, i, j)


def dus_ref(a: np.ndarray, u: np.ndarray, i: np.ndarray, j: np.ndarray) -> list[np.ndarray]:
    si = min(max(int(i), 0), a.shape[0] - u.shape[0])
    sj = min(max(int(j), 0), a.shape[1] - u.shape[1])
    out = a.copy()
    out[si : si + u.shape[0], sj : sj + u.shape[1]] = u
    return [out]


@reference(
    "dynamic_update_slice",
    inputs=[normal(42, (4, 5)), normal(43, (2, 2)), np.array(1, np.int32), np.array(3, np.int32)],
)
def dynamic_update_slice(a, u, i, j):
    return dus_ref(a, u, i, j)


@reference("iota", inputs=[normal(44, (3, 4))])
def iota(a):
    return [
        np.broadcast_to(np.arange(3)[:, None], (3, 4)),
        np.broadcast_to(np.arange(4.0)[None, :], (3, 4)) + f64(a)[0],
    ]


@reference(
    "select",
    inputs=[
        rng(45).integers(0, 2, size=(2, 4)).astype(np.bool_),
        normal(46, (2, 4)),
        normal(47, (2, 4)),
        np.array(False),
        np.array([1, 2, 3], np.int32),
        np.array([-1, -2, -3], np.int32),
    ],
)
def select(p, a, b, q, c, d):
    return [np.where(p, a, b), c if q else d]


@reference(
    "clamp",
    inputs=[
        uniform(48, (8,), -1.0, -0.2),
        normal(49, (8,)),
        uniform(50, (8,), 0.2, 1.0),
        np.array([-100, -5, -4, 0, 10, 11], np.int32),
    ],
)
def clamp(lo, x, hi, y):
    return [np.minimum(np.maximum(*f64(x, lo)), f64(hi)[0]), np.clip(y, -5, 10)]


@reference("pad_reverse", inputs=[normal(51, (2, 3))])
def pad_reverse(a):
    return [pad_ref(a, -1.0, [(1, 1, 1), (0, -1, 2)]), a[::-1, ::-1]]


def pad_ref(a: np.ndarray, value: float, config: list[tuple[int, int, int]]) -> np.ndarray:
    out = np.asarray(a, np.float64)
    for axis, (lo, hi, interior) in enumerate(config):
        n = out.shape[axis]
        size = n + (n - 1) * interior if n else 0
        shape = list(out.shape)
        shape[axis] = size
        spread = np.full(shape, value)
        idx = [slice(None)] * out.ndim
        idx[axis] = slice(0, size, interior + 1)
        spread[tuple(idx)] = out
        # Low/high padding; negative values remove elements.
        before = [(0, 0)] * out.ndim
        before[axis] = (max(lo, 0), max(hi, 0))
        spread = np.pad(spread, before, constant_values=value)
        idx = [slice(None)] * out.ndim
        idx[axis] = slice(max(-lo, 0), spread.shape[axis] - max(-hi, 0))
        out = spread[tuple(idx)]
    return out


# =============================================================================================
# Reductions.


@reference("reduce_sum_f32", inputs=[dyadic(52, (8, 16))])
def reduce_sum_f32(a):
    return [f64(a)[0].sum(axis=1)]


@reference("reduce_sum_random_f32", inputs=[uniform(53, (256, 4), 0.0, 1.0)])
def reduce_sum_random_f32(a):
    return [f64(a)[0].sum(axis=0)]


@reference("reduce_max_f32", inputs=[normal(54, (3, 4, 5))])
def reduce_max_f32(a):
    return [a.max(axis=(0, 2))]


@reference("reduce_sum_i32", inputs=[ints(55, (4, 5), -9, 9)])
def reduce_sum_i32(a):
    return [i64(a)[0].sum(), i64(a)[0].prod(axis=1)]


def argmax_ref(v: np.ndarray) -> list[np.ndarray]:
    idx = np.argmax(v, axis=1)  # first occurrence on ties
    return [v.max(axis=1), idx]


_argmax_in = dyadic(56, (5, 8), -4, 4, 1)
_argmax_in[2, :] = 3.0  # all equal: the lowest index wins


@reference("reduce_argmax", inputs=[_argmax_in])
def reduce_argmax(v):
    return argmax_ref(v)


@reference("reduce_window_max", inputs=[normal(57, (1, 4, 6, 1))])
def reduce_window_max(a):
    return [a.reshape(1, 2, 2, 3, 2, 1).max(axis=(2, 4))]


# =============================================================================================
# dot_general.


@reference("dot_general_matmul_f32", inputs=[normal(58, (16, 32)), normal(59, (32, 8))])
def dot_general_matmul_f32(a, b):
    return [f64(a)[0] @ f64(b)[0]]


@reference(
    "dot_general_batched_f32",
    inputs=[dyadic(60, (3, 4, 6), -4, 4, 4), dyadic(61, (3, 6, 5), -4, 4, 4)],
)
def dot_general_batched_f32(a, b):
    return [np.einsum("bij,bjk->bik", *f64(a, b))]


@reference(
    "dot_general_transposed_rhs_f32",
    inputs=[dyadic(62, (2, 3, 4), -4, 4, 4), dyadic(63, (5, 2, 4), -4, 4, 4)],
)
def dot_general_transposed_rhs_f32(a, b):
    return [np.einsum("bik,jbk->bij", *f64(a, b))]


@reference("dot_general_i32", inputs=[ints(64, (4, 6), -100, 100), ints(65, (6, 3), -100, 100)])
def dot_general_i32(a, b):
    return [i64(a)[0] @ i64(b)[0]]


# =============================================================================================
# Convolution. Reference: explicit loops over output positions in float64.


def conv2d_nhwc_ref(
    x: np.ndarray,
    w: np.ndarray,
    stride: tuple[int, int],
    padding: list[tuple[int, int]],
    rhs_dilation: tuple[int, int] = (1, 1),
    groups: int = 1,
) -> np.ndarray:
    """2-D convolution (cross-correlation), x NHWC, w HWIO; I == C / groups."""
    x, w = f64(x, w)
    n, h, wd, c = x.shape
    kh, kw, ci, co = w.shape
    assert ci * groups == c and co % groups == 0
    xp = np.pad(x, [(0, 0), padding[0], padding[1], (0, 0)])
    ekh = (kh - 1) * rhs_dilation[0] + 1
    ekw = (kw - 1) * rhs_dilation[1] + 1
    oh = (xp.shape[1] - ekh) // stride[0] + 1
    ow = (xp.shape[2] - ekw) // stride[1] + 1
    out = np.zeros((n, oh, ow, co))
    co_per_group = co // groups
    for g in range(groups):
        xs = xp[..., g * ci : (g + 1) * ci]
        ws = w[..., g * co_per_group : (g + 1) * co_per_group]
        for i in range(oh):
            for j in range(ow):
                patch = xs[
                    :,
                    i * stride[0] : i * stride[0] + ekh : rhs_dilation[0],
                    j * stride[1] : j * stride[1] + ekw : rhs_dilation[1],
                    :,
                ]
                out[:, i, j, g * co_per_group : (g + 1) * co_per_group] = np.einsum(
                    "nhwc,hwco->no", patch, ws
                )
    return out


@reference(
    "convolution_nhwc_stride2_pad1", inputs=[normal(66, (2, 7, 7, 3)), normal(67, (3, 3, 3, 4))]
)
def convolution_nhwc_stride2_pad1(x, w):
    return [conv2d_nhwc_ref(x, w, (2, 2), [(1, 1), (1, 1)])]


@reference(
    "convolution_nchw_dilated",
    inputs=[dyadic(68, (1, 2, 9, 8), -4, 4, 4), dyadic(69, (3, 2, 3, 3), -2, 2, 4)],
)
def convolution_nchw_dilated(x, w):
    return [
        conv2d_nhwc_ref(
            x.transpose(0, 2, 3, 1),
            w.transpose(2, 3, 1, 0),
            (2, 1),
            [(2, 1), (2, 1)],
            rhs_dilation=(2, 2),
        ).transpose(0, 3, 1, 2)
    ]


@reference(
    "convolution_depthwise_nhwc",
    inputs=[dyadic(70, (1, 5, 5, 4), -4, 4, 4), dyadic(71, (3, 3, 1, 8), -2, 2, 4)],
)
def convolution_depthwise_nhwc(x, w):
    return [conv2d_nhwc_ref(x, w, (1, 1), [(1, 1), (1, 1)], groups=4)]


# =============================================================================================
# Gather / scatter.


@reference("gather_take_along_axis", inputs=[normal(72, (4, 5)), ints(73, (4, 3), 0, 4)])
def gather_take_along_axis(x, idx):
    return [np.take_along_axis(x, idx.astype(np.int64), axis=1)]


@reference("gather_rows", inputs=[normal(74, (10, 4)), np.array([3, 0, 9, 3, 5, 1], np.int32)])
def gather_rows(t, idx):
    return [t[idx.astype(np.int64)]]


def scatter_add_ref(operand: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> list[np.ndarray]:
    out = np.array(operand, dtype=np.float64 if operand.dtype.kind == "f" else np.int64)
    np.add.at(out, idx.reshape(-1).astype(np.int64), upd)
    return [out]


@reference(
    "scatter_add_f32",
    inputs=[dyadic(75, (6, 3)), np.array([[1], [4], [1], [0], [1]], np.int32), dyadic(76, (5, 3))],
)
def scatter_add_f32(operand, idx, upd):
    return scatter_add_ref(operand, idx, upd)


@reference("scatter_add_i32_histogram", inputs=[ints(77, (20,), 0, 7)])
def scatter_add_i32_histogram(idx):
    return [np.bincount(idx.astype(np.int64), minlength=8)]


# =============================================================================================
# Sort.


@reference("sort_f32", inputs=[normal(78, (4, 8))])
def sort_f32(a):
    return [np.sort(a, axis=1)]


@reference("sort_descending_i32", inputs=[ints(79, (6, 3), -20, 20)])
def sort_descending_i32(a):
    return [-np.sort(-i64(a)[0], axis=0)]


@reference("sort_key_value", inputs=[normal(92, (10,)), np.arange(10, dtype=np.int32)])
def sort_key_value(k, v):
    return [np.sort(k), v[np.argsort(k)]]


@reference(
    "sort_key_value_stable",
    inputs=[ints(80, (12,), 0, 4), np.arange(12, dtype=np.float32) + np.float32(0.5)],
)
def sort_key_value_stable(k, v):
    return [k[np.argsort(k, kind="stable")], v[np.argsort(k, kind="stable")]]


# =============================================================================================
# Control flow.


@reference("while_sum_to_n", inputs=[np.array(100, np.int32)])
def while_sum_to_n(n):
    return [np.array(int(n) * (int(n) + 1) // 2)]


@reference("while_factorial_i64", inputs=[np.array(20, np.int64)])
def while_factorial_i64(n):
    return [np.array(math.factorial(int(n)), dtype=object)]


@reference(
    "while_power_f32",
    inputs=[np.array([1.5, -0.75, 1.1, 0.9, -1.25], np.float32), np.array(7, np.int32)],
)
def while_power_f32(x, n):
    return [f64(x)[0] ** int(n)]


def case_ref(index: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    (x,) = f64(x)
    branches = [lambda: x + x, lambda: x * x, lambda: -x]
    i = int(index)
    return [branches[i if 0 <= i < len(branches) else len(branches) - 1]()]


@reference(
    "case_index", inputs=[np.array(1, np.int32), np.array([1.5, -2.0, 0.25, 3.0], np.float32)]
)
def case_index(index, x):
    return case_ref(index, x)


@reference(
    "case_index_out_of_range",
    inputs=[np.array(5, np.int32), np.array([1.5, -2.0, 0.25, 3.0], np.float32)],
)
def case_index_out_of_range(index, x):
    return case_ref(index, x)


@reference("if_scalar_predicate", inputs=[np.array([0.5, -1.0, 2.0, -0.25, 1.0, -1.5], np.float32)])
def if_scalar_predicate(x):
    return [np.exp(f64(x)[0]) if f64(x)[0].sum() > 0 else np.abs(f64(x)[0])]


# =============================================================================================
# Dynamic shapes.


@reference("dynamic_elementwise_f32", inputs=[normal(81, (7,)), normal(82, (7,))])
def dynamic_elementwise_f32(a, b):
    return [f64(a)[0] * f64(b)[0] + f64(a)[0]]


@reference("dynamic_get_dimension_size", inputs=[dyadic(83, (5, 3))])
def dynamic_get_dimension_size(a):
    return [np.array(a.shape[0]), f64(a)[0].sum(axis=0)]


@reference("dynamic_softmax_rows", inputs=[normal(84, (3, 8))])
def dynamic_softmax_rows(a):
    return softmax_ref(a, axis=1)


@reference(
    "dynamic_matmul",
    inputs=[dyadic(85, (6, 4), -4, 4, 4), dyadic(86, (4, 3), -4, 4, 4), dyadic(87, (3,), -4, 4, 4)],
)
def dynamic_matmul(a, w, b):
    return [f64(a)[0] @ f64(w)[0] + f64(b)[0]]


# =============================================================================================
# Small composite programs.


@reference(
    "mlp_layer_relu",
    inputs=[dyadic(88, (4, 8), -2, 2, 4), dyadic(89, (8, 6), -2, 2, 4), dyadic(90, (6,), -2, 2, 4)],
)
def mlp_layer_relu(x, w, b):
    return [np.maximum(f64(x)[0] @ f64(w)[0] + f64(b)[0], 0.0)]


@reference("layer_norm_f32", inputs=[normal(91, (2, 16)) * np.float32(2.0) + np.float32(1.0)])
def layer_norm_f32(x):
    return [layer_norm_ref(x)]


def layer_norm_ref(x: np.ndarray) -> np.ndarray:
    (x,) = f64(x)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + float(np.float32(1e-5)))
