#!/usr/bin/env python3
"""Generate the bundled StableHLO conformance corpus.

Every case is a self-contained StableHLO program (``cases/<name>.mlir``, entry
``func.func @main``), its inputs and expected outputs (``cases/<name>.npz``: ``input_0`` ...,
``expected_0`` ...), and a table in ``corpus.toml``.

The expected outputs come from a reference that is independent of IREE:

* ``numpy-float64`` (the default): the case's numpy function recomputes the program with
  float64 arithmetic (integers in int64, or Python integers) and the result is cast to the
  output dtype once, at the end.
* ``interpreter``: the StableHLO reference interpreter shipped in jaxlib (see
  ``iree_conformance/interpreter.py``), for programs where a numpy model would be no more independent.

Usage::

    python conformance/stablehlo/generate.py                      # (re)write all cases
    python conformance/stablehlo/generate.py --check-interpreter  # + cross-check numpy vs interpreter
    python conformance/stablehlo/generate.py --verify-iree        # + well-formedness check with IREE
    python conformance/stablehlo/generate.py --only add_f32 --no-write --verify-iree

``--verify-iree`` is only a well-formedness check: it compiles and runs each program with IREE
(llvm-cpu) and compares with the expected values already computed by the reference. IREE never
produces an expected value.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")
CORPUS_TOML = os.path.join(HERE, "corpus.toml")

sys.path.insert(0, HERE)
from iree_conformance.interpreter import InterpreterError, run_interpreter  # noqa: E402

# npz files above this many bytes (uncompressed) are written with np.savez_compressed.
COMPRESS_ABOVE_BYTES = 256 * 1024

# Default tolerances of the suite; a case overrides them only with a tolerance_reason.
DEFAULT_TOLERANCES = {
    np.dtype(np.float32): (1e-5, 1e-6),
    np.dtype(np.float16): (1e-2, 1e-3),
    np.dtype(np.float64): (1e-5, 1e-6),
}

REFERENCE_NUMPY = "numpy-float64"
REFERENCE_INTERPRETER = "interpreter"


@dataclass
class Case:
    name: str
    description: str
    mlir: str
    inputs: list[np.ndarray]
    # numpy reference: takes the inputs, returns the outputs (any float dtype; they are cast
    # to out_dtypes). None when reference == "interpreter".
    ref: Callable[..., list[np.ndarray]] | None
    out_dtypes: list[type]
    reference: str = REFERENCE_NUMPY
    rtol: float | None = None
    atol: float | None = None
    tolerance_reason: str | None = None
    dynamic: bool = False
    expected: list[np.ndarray] = field(default_factory=list)


CASES: list[Case] = []


def case(
    name: str,
    description: str,
    mlir: str,
    inputs: list[np.ndarray],
    ref: Callable[..., list[np.ndarray]] | None,
    out_dtypes: list[type],
    **kwargs,
) -> None:
    if any(c.name == name for c in CASES):
        raise ValueError(f"duplicate case name {name}")
    CASES.append(Case(name, description, mlir, inputs, ref, out_dtypes, **kwargs))


def module(func: str) -> str:
    """Wrap a func.func in a module, indenting it."""
    body = "\n".join(("  " + line) if line.strip() else "" for line in func.strip().splitlines())
    return "module {\n" + body + "\n}\n"


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

SEED_COS_SIN = """
func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xi64>) -> tensor<4xf32> {
    %0 = stablehlo.cosine %arg0 : tensor<4xf32>
    %1 = stablehlo.convert %arg1 : (tensor<4xi64>) -> tensor<4xf32>
    %2 = stablehlo.sine %1 : tensor<4xf32>
    %3 = stablehlo.add %0, %2 : tensor<4xf32>
    return %3 : tensor<4xf32>
}
"""

case(
    "seed_cos_sin",
    "Seed program (EXLA-lowered Nx.add(Nx.cos(a), Nx.sin(b))): cosine, i64->f32 convert, sine, add.",
    module(SEED_COS_SIN),
    [np.array([1.0, 2.0, 3.0, 4.0], np.float32), np.array([1, -1, 1, -1], np.int64)],
    lambda a, b: [np.cos(f64(a)[0]) + np.sin(f64(b)[0])],
    [np.float32],
)


def softmax_1d(n: int) -> str:
    t = f"tensor<{n}xf32>"
    return f"""
func.func public @main(%arg0: {t}) -> {t} {{
  %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %max = stablehlo.reduce(%arg0 init: %neg_inf) applies stablehlo.maximum across dimensions = [0] : ({t}, tensor<f32>) -> tensor<f32>
  %max_b = stablehlo.broadcast_in_dim %max, dims = [] : (tensor<f32>) -> {t}
  %shifted = stablehlo.subtract %arg0, %max_b : {t}
  %exp = stablehlo.exponential %shifted : {t}
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %sum = stablehlo.reduce(%exp init: %zero) applies stablehlo.add across dimensions = [0] : ({t}, tensor<f32>) -> tensor<f32>
  %sum_b = stablehlo.broadcast_in_dim %sum, dims = [] : (tensor<f32>) -> {t}
  %0 = stablehlo.divide %exp, %sum_b : {t}
  return %0 : {t}
}}
"""


def softmax_ref(x: np.ndarray, axis: int = -1) -> list[np.ndarray]:
    (x,) = f64(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return [e / e.sum(axis=axis, keepdims=True)]


case(
    "seed_softmax_4",
    "Seed program: max-subtracted softmax (reduce max, subtract, exp, reduce sum, divide) on 4 elements.",
    module(softmax_1d(4)),
    [np.array([1.0, 2.0, -1.0, -1.5], np.float32)],
    softmax_ref,
    [np.float32],
)

case(
    "seed_softmax_100000",
    "Seed program: the same max-subtracted softmax on 100,000 seeded random elements.",
    module(softmax_1d(100000)),
    [normal(100000, (100000,)) * np.float32(3.0)],
    softmax_ref,
    [np.float32],
    rtol=5e-4,
    tolerance_reason="the f32 sum of 100,000 terms depends on the (implementation-defined) "
    "reduction order; a sequential f32 accumulation, as in the StableHLO reference interpreter, "
    "is off by ~1.2e-4 relative",
)

# =============================================================================================
# Elementwise arithmetic.


def binary(op: str, t: str, n_out_type: str | None = None) -> str:
    return f"""
func.func @main(%a: {t}, %b: {t}) -> {n_out_type or t} {{
  %0 = stablehlo.{op} %a, %b : {t}
  return %0 : {n_out_type or t}
}}
"""


def unary(op: str, t: str) -> str:
    return f"""
func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.{op} %a : {t}
  return %0 : {t}
}}
"""


def multi(args: list[tuple[str, str]], ops: list[tuple[str, str, str]]) -> str:
    """A @main whose results are the given ops: (result type, op, "%a, %b" operands)."""
    params = ", ".join(f"%{n}: {t}" for n, t in args)
    lines = []
    for i, (rt, op, operands) in enumerate(ops):
        lines.append(f"  %{i} = stablehlo.{op} {operands} : {rt}")
    rets = ", ".join(f"%{i}" for i in range(len(ops)))
    rtypes = ", ".join(rt for rt, _, _ in ops)
    return (
        f"func.func @main({params}) -> ({rtypes}) {{\n"
        + "\n".join(lines)
        + f"\n  return {rets} : {rtypes}\n}}\n"
    )


case(
    "add_f32",
    "Elementwise add of two random 3x4 f32 tensors.",
    module(binary("add", "tensor<3x4xf32>")),
    [normal(1, (3, 4)), normal(2, (3, 4))],
    lambda a, b: [f64(a)[0] + f64(b)[0]],
    [np.float32],
)

case(
    "add_i64",
    "Elementwise add of i64 values beyond the 32-bit range.",
    module(binary("add", "tensor<6xi64>")),
    [
        np.array([1 << 40, -(1 << 40), 123456789012, -5, 0, (1 << 62) - 1], np.int64),
        np.array([1 << 35, 7, -123456789012, 5, -(1 << 50), -((1 << 62) - 1)], np.int64),
    ],
    lambda a, b: [np.array([int(x) + int(y) for x, y in zip(a, b, strict=True)], dtype=object)],
    [np.int64],
)

case(
    "subtract_i32",
    "Elementwise subtract of random 2x5 i32 tensors (values in [-1000, 1000]).",
    module(binary("subtract", "tensor<2x5xi32>")),
    [ints(3, (2, 5), -1000, 1000), ints(4, (2, 5), -1000, 1000)],
    lambda a, b: [i64(a)[0] - i64(b)[0]],
    [np.int32],
)

case(
    "subtract_f16",
    "Elementwise subtract of random f16 vectors.",
    module(binary("subtract", "tensor<16xf16>")),
    [uniform(5, (16,), -8, 8, np.float16), uniform(6, (16,), -8, 8, np.float16)],
    lambda a, b: [f64(a)[0] - f64(b)[0]],
    [np.float16],
)

case(
    "multiply_f16",
    "Elementwise multiply of random f16 vectors.",
    module(binary("multiply", "tensor<16xf16>")),
    [uniform(7, (16,), -4, 4, np.float16), uniform(8, (16,), -4, 4, np.float16)],
    lambda a, b: [f64(a)[0] * f64(b)[0]],
    [np.float16],
)

case(
    "multiply_i32_wraparound",
    "Elementwise i32 multiply whose products overflow: StableHLO integer arithmetic wraps (two's complement).",
    module(binary("multiply", "tensor<6xi32>")),
    [
        np.array([65536, 2147483647, -2147483647, 123456, -3, 46341], np.int32),
        np.array([65536, 2, 3, 654321, 7, 46341], np.int32),
    ],
    lambda a, b: [
        wrap_int(np.array([int(x) * int(y) for x, y in zip(a, b, strict=True)], object), np.int32)
    ],
    [np.int32],
)

case(
    "divide_f32",
    "Elementwise f32 divide (divisors bounded away from zero).",
    module(binary("divide", "tensor<4x4xf32>")),
    [
        normal(9, (4, 4)),
        uniform(10, (4, 4), 0.5, 4.0) * np.where(normal(11, (4, 4)) < 0, -1, 1).astype(np.float32),
    ],
    lambda a, b: [f64(a)[0] / f64(b)[0]],
    [np.float32],
)


def trunc_div(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer division rounding toward zero, and the matching remainder (exact, Python ints)."""
    q, r = [], []
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        quotient = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        q.append(quotient)
        r.append(x - y * quotient)
    return np.array(q, dtype=object), np.array(r, dtype=object)


case(
    "divide_remainder_i32",
    "i32 divide (rounds toward zero) and remainder (sign of the dividend) with mixed signs.",
    module(
        multi(
            [("a", "tensor<8xi32>"), ("b", "tensor<8xi32>")],
            [("tensor<8xi32>", "divide", "%a, %b"), ("tensor<8xi32>", "remainder", "%a, %b")],
        )
    ),
    [
        np.array([7, -7, 7, -7, 100, -1, 0, 2147483647], np.int32),
        np.array([2, 2, -2, -2, 7, 3, 5, -10], np.int32),
    ],
    lambda a, b: list(trunc_div(a, b)),
    [np.int32, np.int32],
)

case(
    "remainder_f32",
    "f32 remainder (fmod semantics: result has the sign of the dividend).",
    module(binary("remainder", "tensor<8xf32>")),
    [
        np.array([5.5, -5.5, 5.5, -5.5, 10.0, 0.75, -3.0, 7.25], np.float32),
        np.array([2.0, 2.0, -2.0, -2.0, 2.5, 0.5, 4.0, 1.5], np.float32),
    ],
    lambda a, b: [np.fmod(f64(a)[0], f64(b)[0])],
    [np.float32],
)

case(
    "max_min_f32",
    "Elementwise maximum and minimum of random f32 tensors (two results).",
    module(
        multi(
            [("a", "tensor<2x8xf32>"), ("b", "tensor<2x8xf32>")],
            [("tensor<2x8xf32>", "maximum", "%a, %b"), ("tensor<2x8xf32>", "minimum", "%a, %b")],
        )
    ),
    [normal(12, (2, 8)), normal(13, (2, 8))],
    lambda a, b: [np.maximum(*f64(a, b)), np.minimum(*f64(a, b))],
    [np.float32, np.float32],
)

case(
    "max_min_i64",
    "Elementwise maximum and minimum of i64 values beyond the 32-bit range.",
    module(
        multi(
            [("a", "tensor<6xi64>"), ("b", "tensor<6xi64>")],
            [("tensor<6xi64>", "maximum", "%a, %b"), ("tensor<6xi64>", "minimum", "%a, %b")],
        )
    ),
    [
        np.array([1 << 40, -(1 << 40), 5, -5, (1 << 33) + 1, 0], np.int64),
        np.array([(1 << 40) + 1, -(1 << 41), -5, 5, 1 << 33, -1], np.int64),
    ],
    lambda a, b: [np.maximum(*i64(a, b)), np.minimum(*i64(a, b))],
    [np.int64, np.int64],
)

case(
    "abs_negate_i32",
    "abs and negate on i32 (two results).",
    module(
        multi(
            [("a", "tensor<8xi32>")],
            [("tensor<8xi32>", "abs", "%a"), ("tensor<8xi32>", "negate", "%a")],
        )
    ),
    [np.array([0, 1, -1, 17, -17, 2147483647, -2147483647, -1000000], np.int32)],
    lambda a: [np.abs(i64(a)[0]), -i64(a)[0]],
    [np.int32, np.int32],
)

case(
    "abs_negate_f16",
    "abs and negate on f16 (two results).",
    module(
        multi(
            [("a", "tensor<12xf16>")],
            [("tensor<12xf16>", "abs", "%a"), ("tensor<12xf16>", "negate", "%a")],
        )
    ),
    [uniform(14, (12,), -100, 100, np.float16)],
    lambda a: [np.abs(f64(a)[0]), -f64(a)[0]],
    [np.float16, np.float16],
)

case(
    "exp_log_f32",
    "exp on [-10, 10] and log on [1e-3, 1e3] (f32).",
    module(
        multi(
            [("a", "tensor<32xf32>"), ("b", "tensor<32xf32>")],
            [("tensor<32xf32>", "exponential", "%a"), ("tensor<32xf32>", "log", "%b")],
        )
    ),
    [uniform(15, (32,), -10, 10), np.exp(uniform(16, (32,), -6.9, 6.9)).astype(np.float32)],
    lambda a, b: [np.exp(f64(a)[0]), np.log(f64(b)[0])],
    [np.float32, np.float32],
)

case(
    "tanh_f32",
    "tanh on [-5, 5] (f32).",
    module(unary("tanh", "tensor<4x8xf32>")),
    [uniform(17, (4, 8), -5, 5)],
    lambda a: [np.tanh(f64(a)[0])],
    [np.float32],
)

case(
    "exp_tanh_f16",
    "exp and tanh on f16 (two results).",
    module(
        multi(
            [("a", "tensor<16xf16>")],
            [("tensor<16xf16>", "exponential", "%a"), ("tensor<16xf16>", "tanh", "%a")],
        )
    ),
    [uniform(18, (16,), -4, 4, np.float16)],
    lambda a: [np.exp(f64(a)[0]), np.tanh(f64(a)[0])],
    [np.float16, np.float16],
)

case(
    "sqrt_rsqrt_f32",
    "sqrt and rsqrt on positive f32 values in [1e-2, 1e2].",
    module(
        multi(
            [("a", "tensor<24xf32>")],
            [("tensor<24xf32>", "sqrt", "%a"), ("tensor<24xf32>", "rsqrt", "%a")],
        )
    ),
    [np.exp(uniform(19, (24,), -4.6, 4.6)).astype(np.float32)],
    lambda a: [np.sqrt(f64(a)[0]), 1.0 / np.sqrt(f64(a)[0])],
    [np.float32, np.float32],
)

case(
    "floor_ceil_f32",
    "floor and ceil on f32 values including halves, integers and negatives.",
    module(
        multi(
            [("a", "tensor<10xf32>")],
            [("tensor<10xf32>", "floor", "%a"), ("tensor<10xf32>", "ceil", "%a")],
        )
    ),
    [np.array([0.5, -0.5, 1.5, -1.5, 2.0, -2.0, 2.7, -2.7, 1e6 + 0.25, -0.0001], np.float32)],
    lambda a: [np.floor(f64(a)[0]), np.ceil(f64(a)[0])],
    [np.float32, np.float32],
)

case(
    "round_sign_f32",
    "round_nearest_even, round_nearest_afz and sign on f32 values including exact halves.",
    module(
        multi(
            [("a", "tensor<10xf32>")],
            [
                ("tensor<10xf32>", "round_nearest_even", "%a"),
                ("tensor<10xf32>", "round_nearest_afz", "%a"),
                ("tensor<10xf32>", "sign", "%a"),
            ],
        )
    ),
    [np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 0.0, 3.0], np.float32)],
    lambda a: [
        np.round(f64(a)[0]),
        np.sign(f64(a)[0]) * np.floor(np.abs(f64(a)[0]) + 0.5),
        np.sign(f64(a)[0]),
    ],
    [np.float32, np.float32, np.float32],
)

case(
    "power_f32",
    "f32 power with positive bases and fractional/negative exponents.",
    module(binary("power", "tensor<16xf32>")),
    [uniform(20, (16,), 0.1, 4.0), uniform(21, (16,), -3.0, 3.0)],
    lambda a, b: [np.power(*f64(a, b))],
    [np.float32],
)

case(
    "power_i32",
    "i32 power with non-negative exponents (integer exponentiation).",
    module(binary("power", "tensor<8xi32>")),
    [
        np.array([2, -3, 5, 0, 1, -1, 7, 10], np.int32),
        np.array([10, 3, 0, 4, 30, 7, 5, 9], np.int32),
    ],
    lambda a, b: [np.array([int(x) ** int(y) for x, y in zip(a, b, strict=True)], dtype=object)],
    [np.int32],
)

case(
    "unary_misc_f32",
    "logistic, log_plus_one, exponential_minus_one and cbrt on f32.",
    module(
        multi(
            [("a", "tensor<16xf32>")],
            [
                ("tensor<16xf32>", "logistic", "%a"),
                ("tensor<16xf32>", "log_plus_one", "%a"),
                ("tensor<16xf32>", "exponential_minus_one", "%a"),
                ("tensor<16xf32>", "cbrt", "%a"),
            ],
        )
    ),
    [uniform(22, (16,), -0.9, 3.0)],
    lambda a: [
        1.0 / (1.0 + np.exp(-f64(a)[0])),
        np.log1p(f64(a)[0]),
        np.expm1(f64(a)[0]),
        np.cbrt(f64(a)[0]),
    ],
    [np.float32] * 4,
)

case(
    "atan2_f32",
    "atan2 on f32 covering all four quadrants.",
    module(binary("atan2", "tensor<12xf32>")),
    [normal(23, (12,)), normal(24, (12,))],
    lambda a, b: [np.arctan2(*f64(a, b))],
    [np.float32],
)

# =============================================================================================
# Logical / bitwise / compare.

BOOL4 = (np.array([False, False, True, True]), np.array([False, True, False, True]))

case(
    "logical_i1",
    "and, or, xor, not on i1 over the full truth table.",
    module(
        multi(
            [("a", "tensor<4xi1>"), ("b", "tensor<4xi1>")],
            [
                ("tensor<4xi1>", "and", "%a, %b"),
                ("tensor<4xi1>", "or", "%a, %b"),
                ("tensor<4xi1>", "xor", "%a, %b"),
                ("tensor<4xi1>", "not", "%a"),
            ],
        )
    ),
    list(BOOL4),
    lambda a, b: [a & b, a | b, a ^ b, ~a],
    [np.bool_] * 4,
)

case(
    "bitwise_i32",
    "and, or, xor, not on random i32 bit patterns (including negative values).",
    module(
        multi(
            [("a", "tensor<10xi32>"), ("b", "tensor<10xi32>")],
            [
                ("tensor<10xi32>", "and", "%a, %b"),
                ("tensor<10xi32>", "or", "%a, %b"),
                ("tensor<10xi32>", "xor", "%a, %b"),
                ("tensor<10xi32>", "not", "%a"),
            ],
        )
    ),
    [ints(25, (10,), -(2**31), 2**31 - 1), ints(26, (10,), -(2**31), 2**31 - 1)],
    lambda a, b: [
        np.bitwise_and(*i64(a, b)),
        np.bitwise_or(*i64(a, b)),
        np.bitwise_xor(*i64(a, b)),
        np.invert(i64(a)[0]),
    ],
    [np.int32] * 4,
)


def shift_ref(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    left, arith, logical = [], [], []
    for x, s in zip(a.tolist(), b.tolist(), strict=True):
        u = x & 0xFFFFFFFF
        in_range = 0 <= s < 32
        left.append((u << s) & 0xFFFFFFFF if in_range else 0)
        arith.append(x >> s if in_range else (-1 if x < 0 else 0))
        logical.append(u >> s if in_range else 0)
    return [wrap_int(np.array(v, object), np.int32) for v in (left, arith, logical)]


SHIFTS = [
    ("tensor<12xi32>", op, "%a, %b")
    for op in ("shift_left", "shift_right_arithmetic", "shift_right_logical")
]

case(
    "shifts_i32",
    "shift_left, shift_right_arithmetic, shift_right_logical on i32 with amounts in [0, 31].",
    module(multi([("a", "tensor<12xi32>"), ("b", "tensor<12xi32>")], SHIFTS)),
    [
        np.array(
            [1, -1, 12345, -12345, 2147483647, -2147483648, 7, -8, 255, -256, 1, -1], np.int32
        ),
        np.array([0, 1, 4, 4, 31, 31, 3, 3, 24, 8, 31, 30], np.int32),
    ],
    shift_ref,
    [np.int32] * 3,
)

case(
    "shifts_i32_out_of_range",
    "Shifts by amounts >= 32 (and negative): StableHLO defines these (0, or the sign fill for arithmetic right shifts).",
    module(multi([("a", "tensor<12xi32>"), ("b", "tensor<12xi32>")], SHIFTS)),
    [
        np.array(
            [1, -1, 12345, -12345, 2147483647, -2147483648, 7, -8, 255, -256, 1, -1], np.int32
        ),
        np.array([32, 32, 33, 40, 100, 64, -1, -1, 2147483647, -2147483648, 32, 63], np.int32),
    ],
    shift_ref,
    [np.int32] * 3,
)

DIRECTIONS = ["EQ", "NE", "LT", "LE", "GT", "GE"]
NP_COMPARE = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}


def compare_func(t: str, t_out: str, kind: str, directions: list[str]) -> str:
    lines = [
        f"  %{i} = stablehlo.compare {d}, %a, %b, {kind} : ({t}, {t}) -> {t_out}"
        for i, d in enumerate(directions)
    ]
    rets = ", ".join(f"%{i}" for i in range(len(directions)))
    rtypes = ", ".join([t_out] * len(directions))
    return (
        f"func.func @main(%a: {t}, %b: {t}) -> ({rtypes}) {{\n"
        + "\n".join(lines)
        + f"\n  return {rets} : {rtypes}\n}}\n"
    )


_cmp_a = dyadic(27, (12,), -2, 2, 2)
_cmp_b = _cmp_a.copy()
_cmp_b[::2] = dyadic(28, (6,), -2, 2, 2)

case(
    "compare_f32",
    "compare EQ/NE/LT/LE/GT/GE (FLOAT) on f32 with many equal pairs; six i1 results.",
    module(compare_func("tensor<12xf32>", "tensor<12xi1>", "FLOAT", DIRECTIONS)),
    [_cmp_a, _cmp_b],
    lambda a, b: [NP_COMPARE[d](*f64(a, b)) for d in DIRECTIONS],
    [np.bool_] * 6,
)

case(
    "compare_i64",
    "compare LT/GE/NE/EQ (SIGNED) on i64 values beyond the 32-bit range.",
    module(compare_func("tensor<6xi64>", "tensor<6xi1>", "SIGNED", ["LT", "GE", "NE", "EQ"])),
    [
        np.array([1 << 40, -(1 << 40), 5, -5, 1 << 33, 0], np.int64),
        np.array([(1 << 40) + 1, -(1 << 40), -5, 5, 1, 0], np.int64),
    ],
    lambda a, b: [NP_COMPARE[d](*i64(a, b)) for d in ["LT", "GE", "NE", "EQ"]],
    [np.bool_] * 4,
)

case(
    "compare_i32_select",
    "compare GT (SIGNED) on i32 feeding select: elementwise max via select.",
    module("""
func.func @main(%a: tensor<3x4xi32>, %b: tensor<3x4xi32>) -> tensor<3x4xi32> {
  %p = stablehlo.compare GT, %a, %b, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
  %0 = stablehlo.select %p, %a, %b : tensor<3x4xi1>, tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}
"""),
    [ints(29, (3, 4), -50, 50), ints(30, (3, 4), -50, 50)],
    lambda a, b: [np.where(a > b, a, b)],
    [np.int32],
)

# =============================================================================================
# Convert.

case(
    "convert_f32_i32",
    "f32 -> i32 (truncation toward zero) and i32 -> f32 (round to nearest even above 2^24).",
    module("""
func.func @main(%a: tensor<10xf32>, %b: tensor<6xi32>) -> (tensor<10xi32>, tensor<6xf32>) {
  %0 = stablehlo.convert %a : (tensor<10xf32>) -> tensor<10xi32>
  %1 = stablehlo.convert %b : (tensor<6xi32>) -> tensor<6xf32>
  return %0, %1 : tensor<10xi32>, tensor<6xf32>
}
"""),
    [
        np.array([0.0, 0.9, -0.9, 1.5, -1.5, 2.5, -2.5, 123456.75, -7654321.0, 1e9], np.float32),
        np.array([0, -1, 16777217, 16777219, -16777219, 2147483647], np.int32),
    ],
    lambda a, b: [np.trunc(f64(a)[0]).astype(np.int64), f64(b)[0]],
    [np.int32, np.float32],
)

case(
    "convert_i64_f32",
    "i64 -> f32 with values that need rounding (round to nearest even).",
    module("""
func.func @main(%a: tensor<8xi64>) -> tensor<8xf32> {
  %0 = stablehlo.convert %a : (tensor<8xi64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""),
    [
        np.array(
            [0, 1, -1, 16777217, 16777219, -(1 << 40) - 3, (1 << 52) + 12345, 1 << 62], np.int64
        )
    ],
    lambda a: [np.array([float(int(x)) for x in a])],  # exact below 2^53; 2^62 is a power of 2
    [np.float32],
)

case(
    "convert_f32_f16",
    "f32 -> f16: rounding to 11 significant bits, f16 subnormals, overflow to +/-inf.",
    module("""
func.func @main(%a: tensor<10xf32>) -> tensor<10xf16> {
  %0 = stablehlo.convert %a : (tensor<10xf32>) -> tensor<10xf16>
  return %0 : tensor<10xf16>
}
"""),
    [
        np.array(
            [0.0, 1.0, -2.5, 0.1, 3.14159265, 1.0009765625, 65504.0, 70000.0, -70000.0, 3e-6],
            np.float32,
        )
    ],
    lambda a: [f64(a)[0]],
    [np.float16],
)

case(
    "convert_i1_f32",
    "i1 -> f32 (true is 1.0) and i1 -> i32.",
    module("""
func.func @main(%a: tensor<6xi1>) -> (tensor<6xf32>, tensor<6xi32>) {
  %0 = stablehlo.convert %a : (tensor<6xi1>) -> tensor<6xf32>
  %1 = stablehlo.convert %a : (tensor<6xi1>) -> tensor<6xi32>
  return %0, %1 : tensor<6xf32>, tensor<6xi32>
}
"""),
    [np.array([True, False, True, True, False, False])],
    lambda a: [a.astype(np.float64), a.astype(np.int64)],
    [np.float32, np.int32],
)

case(
    "convert_f16_f32_i32_i64",
    "f16 -> f32 (exact) and i32 -> i64 (sign extension).",
    module("""
func.func @main(%a: tensor<8xf16>, %b: tensor<4xi32>) -> (tensor<8xf32>, tensor<4xi64>) {
  %0 = stablehlo.convert %a : (tensor<8xf16>) -> tensor<8xf32>
  %1 = stablehlo.convert %b : (tensor<4xi32>) -> tensor<4xi64>
  return %0, %1 : tensor<8xf32>, tensor<4xi64>
}
"""),
    [
        uniform(31, (8,), -1000, 1000, np.float16),
        np.array([-2147483648, -1, 0, 2147483647], np.int32),
    ],
    lambda a, b: [f64(a)[0], i64(b)[0]],
    [np.float32, np.int64],
)

# =============================================================================================
# Shapes and data movement.

case(
    "broadcast_in_dim",
    "broadcast_in_dim: row vector, column vector, scalar and a size-1 dimension expansion.",
    module("""
func.func @main(%row: tensor<4xf32>, %col: tensor<3xf32>, %s: tensor<f32>, %m: tensor<1x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) {
  %0 = stablehlo.broadcast_in_dim %row, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  %1 = stablehlo.broadcast_in_dim %col, dims = [0] : (tensor<3xf32>) -> tensor<3x4xf32>
  %2 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %3 = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<3x4xf32>
  return %0, %1, %2, %3 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>
}
"""),
    [normal(32, (4,)), normal(33, (3,)), np.array(2.5, np.float32), normal(34, (1, 4))],
    lambda r, c, s, m: [
        np.broadcast_to(r, (3, 4)),
        np.broadcast_to(c[:, None], (3, 4)),
        np.broadcast_to(s, (2, 3)),
        np.broadcast_to(m, (3, 4)),
    ],
    [np.float32] * 4,
)

case(
    "reshape",
    "reshape 2x3x4 -> 6x4 and 2x3x4 -> 24 -> 4x3x2 (row-major element order).",
    module("""
func.func @main(%a: tensor<2x3x4xi32>) -> (tensor<6x4xi32>, tensor<4x3x2xi32>) {
  %0 = stablehlo.reshape %a : (tensor<2x3x4xi32>) -> tensor<6x4xi32>
  %1 = stablehlo.reshape %a : (tensor<2x3x4xi32>) -> tensor<24xi32>
  %2 = stablehlo.reshape %1 : (tensor<24xi32>) -> tensor<4x3x2xi32>
  return %0, %2 : tensor<6x4xi32>, tensor<4x3x2xi32>
}
"""),
    [np.arange(24, dtype=np.int32).reshape(2, 3, 4) * 3 - 20],
    lambda a: [a.reshape(6, 4), a.reshape(4, 3, 2)],
    [np.int32, np.int32],
)

case(
    "transpose_3d",
    "transpose of a 2x3x4 tensor with permutation [2, 0, 1], and a 2-D transpose.",
    module("""
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<3x5xf32>) -> (tensor<4x2x3xf32>, tensor<5x3xf32>) {
  %0 = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = stablehlo.transpose %b, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>
  return %0, %1 : tensor<4x2x3xf32>, tensor<5x3xf32>
}
"""),
    [normal(35, (2, 3, 4)), normal(36, (3, 5))],
    lambda a, b: [np.transpose(a, (2, 0, 1)), b.T],
    [np.float32, np.float32],
)

case(
    "concatenate",
    "concatenate three tensors along dimension 1 and two along dimension 0.",
    module("""
func.func @main(%a: tensor<2x1xf32>, %b: tensor<2x3xf32>, %c: tensor<2x2xf32>) -> (tensor<2x6xf32>, tensor<4x3xf32>) {
  %0 = stablehlo.concatenate %a, %b, %c, dim = 1 : (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
  %1 = stablehlo.concatenate %b, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<2x6xf32>, tensor<4x3xf32>
}
"""),
    [normal(37, (2, 1)), normal(38, (2, 3)), normal(39, (2, 2))],
    lambda a, b, c: [np.concatenate([a, b, c], axis=1), np.concatenate([b, b], axis=0)],
    [np.float32, np.float32],
)

case(
    "slice_strided",
    "slice with start/limit/stride on both dimensions of a 6x8 tensor.",
    module("""
func.func @main(%a: tensor<6x8xi32>) -> (tensor<2x3xi32>, tensor<6x1xi32>) {
  %0 = stablehlo.slice %a [1:5:2, 1:8:3] : (tensor<6x8xi32>) -> tensor<2x3xi32>
  %1 = stablehlo.slice %a [0:6, 7:8] : (tensor<6x8xi32>) -> tensor<6x1xi32>
  return %0, %1 : tensor<2x3xi32>, tensor<6x1xi32>
}
"""),
    [np.arange(48, dtype=np.int32).reshape(6, 8)],
    lambda a: [a[1:5:2, 1:8:3], a[0:6, 7:8]],
    [np.int32, np.int32],
)

DYNAMIC_SLICE = """
func.func @main(%a: tensor<5x6xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<2x3xf32> {
  %0 = stablehlo.dynamic_slice %a, %i, %j, sizes = [2, 3] : (tensor<5x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""


def dynamic_slice_ref(a: np.ndarray, i: np.ndarray, j: np.ndarray) -> list[np.ndarray]:
    si = min(max(int(i), 0), a.shape[0] - 2)
    sj = min(max(int(j), 0), a.shape[1] - 3)
    return [a[si : si + 2, sj : sj + 3]]


case(
    "dynamic_slice",
    "dynamic_slice of a 2x3 window at runtime start indices (in range).",
    module(DYNAMIC_SLICE),
    [normal(40, (5, 6)), np.array(2, np.int32), np.array(1, np.int32)],
    dynamic_slice_ref,
    [np.float32],
)

case(
    "dynamic_slice_clamped",
    "dynamic_slice with out-of-range start indices, which StableHLO clamps so the window fits.",
    module(DYNAMIC_SLICE),
    [normal(41, (5, 6)), np.array(7, np.int32), np.array(-3, np.int32)],
    dynamic_slice_ref,
    [np.float32],
)


def dus_ref(a: np.ndarray, u: np.ndarray, i: np.ndarray, j: np.ndarray) -> list[np.ndarray]:
    si = min(max(int(i), 0), a.shape[0] - u.shape[0])
    sj = min(max(int(j), 0), a.shape[1] - u.shape[1])
    out = a.copy()
    out[si : si + u.shape[0], sj : sj + u.shape[1]] = u
    return [out]


case(
    "dynamic_update_slice",
    "dynamic_update_slice of a 2x2 update into a 4x5 tensor at runtime start indices.",
    module("""
func.func @main(%a: tensor<4x5xf32>, %u: tensor<2x2xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<4x5xf32> {
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %j : (tensor<4x5xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
"""),
    [normal(42, (4, 5)), normal(43, (2, 2)), np.array(1, np.int32), np.array(3, np.int32)],
    dus_ref,
    [np.float32],
)

case(
    "iota",
    "iota along dimension 0 (i32) and dimension 1 (f32), combined with an input.",
    module("""
func.func @main(%a: tensor<3x4xf32>) -> (tensor<3x4xi32>, tensor<3x4xf32>) {
  %0 = stablehlo.iota dim = 0 : tensor<3x4xi32>
  %1 = stablehlo.iota dim = 1 : tensor<3x4xf32>
  %2 = stablehlo.add %1, %a : tensor<3x4xf32>
  return %0, %2 : tensor<3x4xi32>, tensor<3x4xf32>
}
"""),
    [normal(44, (3, 4))],
    lambda a: [
        np.broadcast_to(np.arange(3)[:, None], (3, 4)),
        np.broadcast_to(np.arange(4.0)[None, :], (3, 4)) + f64(a)[0],
    ],
    [np.int32, np.float32],
)

case(
    "select",
    "select with an i1 predicate tensor (f32 operands) and with a scalar predicate (i32 operands).",
    module("""
func.func @main(%p: tensor<2x4xi1>, %a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %q: tensor<i1>, %c: tensor<3xi32>, %d: tensor<3xi32>) -> (tensor<2x4xf32>, tensor<3xi32>) {
  %0 = stablehlo.select %p, %a, %b : tensor<2x4xi1>, tensor<2x4xf32>
  %1 = stablehlo.select %q, %c, %d : (tensor<i1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0, %1 : tensor<2x4xf32>, tensor<3xi32>
}
"""),
    [
        rng(45).integers(0, 2, size=(2, 4)).astype(np.bool_),
        normal(46, (2, 4)),
        normal(47, (2, 4)),
        np.array(False),
        np.array([1, 2, 3], np.int32),
        np.array([-1, -2, -3], np.int32),
    ],
    lambda p, a, b, q, c, d: [np.where(p, a, b), c if q else d],
    [np.float32, np.int32],
)

case(
    "clamp",
    "clamp with elementwise f32 bounds and with scalar i32 bounds.",
    module("""
func.func @main(%lo: tensor<8xf32>, %x: tensor<8xf32>, %hi: tensor<8xf32>, %y: tensor<6xi32>) -> (tensor<8xf32>, tensor<6xi32>) {
  %0 = stablehlo.clamp %lo, %x, %hi : tensor<8xf32>
  %min = stablehlo.constant dense<-5> : tensor<i32>
  %max = stablehlo.constant dense<10> : tensor<i32>
  %1 = stablehlo.clamp %min, %y, %max : (tensor<i32>, tensor<6xi32>, tensor<i32>) -> tensor<6xi32>
  return %0, %1 : tensor<8xf32>, tensor<6xi32>
}
"""),
    [
        uniform(48, (8,), -1.0, -0.2),
        normal(49, (8,)),
        uniform(50, (8,), 0.2, 1.0),
        np.array([-100, -5, -4, 0, 10, 11], np.int32),
    ],
    lambda lo, x, hi, y: [np.minimum(np.maximum(*f64(x, lo)), f64(hi)[0]), np.clip(y, -5, 10)],
    [np.float32, np.int32],
)

case(
    "pad_reverse",
    "pad with low/high/interior padding (including negative high padding) and reverse.",
    module("""
func.func @main(%a: tensor<2x3xf32>) -> (tensor<5x6xf32>, tensor<2x3xf32>) {
  %pv = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
  %0 = stablehlo.pad %a, %pv, low = [1, 0], high = [1, -1], interior = [1, 2] : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x6xf32>
  %1 = stablehlo.reverse %a, dims = [0, 1] : tensor<2x3xf32>
  return %0, %1 : tensor<5x6xf32>, tensor<2x3xf32>
}
"""),
    [normal(51, (2, 3))],
    lambda a: [pad_ref(a, -1.0, [(1, 1, 1), (0, -1, 2)]), a[::-1, ::-1]],
    [np.float32, np.float32],
)


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

case(
    "reduce_sum_f32",
    "reduce add over dimension 1 of an 8x16 f32 tensor (dyadic values: the sum is exact).",
    module("""
func.func @main(%a: tensor<8x16xf32>) -> tensor<8xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""),
    [dyadic(52, (8, 16))],
    lambda a: [f64(a)[0].sum(axis=1)],
    [np.float32],
)

case(
    "reduce_sum_random_f32",
    "reduce add over dimension 0 of a 256x4 random f32 tensor (with a region body).",
    module("""
func.func @main(%a: tensor<256x4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %zero) across dimensions = [0] : (tensor<256x4xf32>, tensor<f32>) -> tensor<4xf32>
   reducer(%x: tensor<f32>, %y: tensor<f32>) {
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }
  return %0 : tensor<4xf32>
}
"""),
    [uniform(53, (256, 4), 0.0, 1.0)],
    lambda a: [f64(a)[0].sum(axis=0)],
    [np.float32],
)

case(
    "reduce_max_f32",
    "reduce maximum over dimensions [0, 2] of a 3x4x5 f32 tensor (init -inf).",
    module("""
func.func @main(%a: tensor<3x4x5xf32>) -> tensor<4xf32> {
  %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %neg_inf) applies stablehlo.maximum across dimensions = [0, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""),
    [normal(54, (3, 4, 5))],
    lambda a: [a.max(axis=(0, 2))],
    [np.float32],
)

case(
    "reduce_sum_i32",
    "reduce add of a 4x5 i32 tensor over all dimensions to a scalar, and reduce multiply over dimension 1.",
    module("""
func.func @main(%a: tensor<4x5xi32>) -> (tensor<i32>, tensor<4xi32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x5xi32>, tensor<i32>) -> tensor<i32>
  %1 = stablehlo.reduce(%a init: %one) applies stablehlo.multiply across dimensions = [1] : (tensor<4x5xi32>, tensor<i32>) -> tensor<4xi32>
  return %0, %1 : tensor<i32>, tensor<4xi32>
}
"""),
    [ints(55, (4, 5), -9, 9)],
    lambda a: [i64(a)[0].sum(), i64(a)[0].prod(axis=1)],
    [np.int32, np.int32],
)


def argmax_ref(v: np.ndarray) -> list[np.ndarray]:
    idx = np.argmax(v, axis=1)  # first occurrence on ties
    return [v.max(axis=1), idx]


_argmax_in = dyadic(56, (5, 8), -4, 4, 1)
_argmax_in[2, :] = 3.0  # all equal: the lowest index wins

case(
    "reduce_argmax",
    "argmax-style variadic reduce over (value, index) with a comparator body; ties pick the lowest index.",
    module("""
func.func @main(%v: tensor<5x8xf32>) -> (tensor<5xf32>, tensor<5xi32>) {
  %idx = stablehlo.iota dim = 1 : tensor<5x8xi32>
  %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %minus_one = stablehlo.constant dense<-1> : tensor<i32>
  %0:2 = stablehlo.reduce(%v init: %neg_inf), (%idx init: %minus_one) across dimensions = [1] : (tensor<5x8xf32>, tensor<5x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<5xf32>, tensor<5xi32>)
   reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {
    %gt = stablehlo.compare GT, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %lower = stablehlo.compare LT, %b, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %tie = stablehlo.and %eq, %lower : tensor<i1>
    %take_lhs = stablehlo.or %gt, %tie : tensor<i1>
    %val = stablehlo.select %take_lhs, %a, %c : tensor<i1>, tensor<f32>
    %ind = stablehlo.select %take_lhs, %b, %d : tensor<i1>, tensor<i32>
    stablehlo.return %val, %ind : tensor<f32>, tensor<i32>
  }
  return %0#0, %0#1 : tensor<5xf32>, tensor<5xi32>
}
"""),
    [_argmax_in],
    argmax_ref,
    [np.float32, np.int32],
)

case(
    "reduce_window_max",
    "reduce_window maximum: 2x2 max pooling with stride 2 on a 1x4x6x1 NHWC tensor.",
    module("""
func.func @main(%a: tensor<1x4x6x1xf32>) -> tensor<1x2x3x1xf32> {
  %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%a, %neg_inf) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<1x4x6x1xf32>, tensor<f32>) -> tensor<1x2x3x1xf32>
  return %0 : tensor<1x2x3x1xf32>
}
"""),
    [normal(57, (1, 4, 6, 1))],
    lambda a: [a.reshape(1, 2, 2, 3, 2, 1).max(axis=(2, 4))],
    [np.float32],
)

# =============================================================================================
# dot_general.

case(
    "dot_general_matmul_f32",
    "Plain matmul via dot_general (contracting dims [1] x [0]), 16x32 @ 32x8 random f32.",
    module("""
func.func @main(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
"""),
    [normal(58, (16, 32)), normal(59, (32, 8))],
    lambda a, b: [f64(a)[0] @ f64(b)[0]],
    [np.float32],
    atol=1e-5,
    tolerance_reason="f32 accumulation of 32 products of N(0,1) values (order is "
    "implementation-defined): small entries carry absolute rounding error ~2e-6, "
    "at or above the default atol",
)

case(
    "dot_general_batched_f32",
    "Batched matmul via dot_general with batching dims [0] x [0] and contracting dims [2] x [1].",
    module("""
func.func @main(%a: tensor<3x4x6xf32>, %b: tensor<3x6x5xf32>) -> tensor<3x4x5xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x4x6xf32>, tensor<3x6x5xf32>) -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}
"""),
    [dyadic(60, (3, 4, 6), -4, 4, 4), dyadic(61, (3, 6, 5), -4, 4, 4)],
    lambda a, b: [np.einsum("bij,bjk->bik", *f64(a, b))],
    [np.float32],
)

case(
    "dot_general_transposed_rhs_f32",
    "dot_general contracting the last dims of both operands (A @ B^T) with a batch dim on dim 1 of rhs.",
    module("""
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<5x2x4xf32>) -> tensor<2x3x5xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [1], contracting_dims = [2] x [2] : (tensor<2x3x4xf32>, tensor<5x2x4xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}
"""),
    [dyadic(62, (2, 3, 4), -4, 4, 4), dyadic(63, (5, 2, 4), -4, 4, 4)],
    lambda a, b: [np.einsum("bik,jbk->bij", *f64(a, b))],
    [np.float32],
)

case(
    "dot_general_i32",
    "Integer matmul via dot_general (i32, exact).",
    module("""
func.func @main(%a: tensor<4x6xi32>, %b: tensor<6x3xi32>) -> tensor<4x3xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x6xi32>, tensor<6x3xi32>) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}
"""),
    [ints(64, (4, 6), -100, 100), ints(65, (6, 3), -100, 100)],
    lambda a, b: [i64(a)[0] @ i64(b)[0]],
    [np.int32],
)

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


case(
    "convolution_nhwc_stride2_pad1",
    "2-D convolution, NHWC input / HWIO kernel, 3x3 window, stride 2, padding 1 on each side.",
    module("""
func.func @main(%x: tensor<2x7x7x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x7x7x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}
"""),
    [normal(66, (2, 7, 7, 3)), normal(67, (3, 3, 3, 4))],
    lambda x, w: [conv2d_nhwc_ref(x, w, (2, 2), [(1, 1), (1, 1)])],
    [np.float32],
)

case(
    "convolution_nchw_dilated",
    "2-D convolution, NCHW input / OIHW kernel, 3x3 window, rhs dilation 2, strides (2, 1), asymmetric padding (2, 1).",
    module("""
func.func @main(%x: tensor<1x2x9x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x4x7xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 1], pad = [[2, 1], [2, 1]], lhs_dilate = [1, 1], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x9x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x7xf32>
  return %0 : tensor<1x3x4x7xf32>
}
"""),
    [dyadic(68, (1, 2, 9, 8), -4, 4, 4), dyadic(69, (3, 2, 3, 3), -2, 2, 4)],
    lambda x, w: [
        conv2d_nhwc_ref(
            x.transpose(0, 2, 3, 1),
            w.transpose(2, 3, 1, 0),
            (2, 1),
            [(2, 1), (2, 1)],
            rhs_dilation=(2, 2),
        ).transpose(0, 3, 1, 2)
    ],
    [np.float32],
)

case(
    "convolution_depthwise_nhwc",
    "Depthwise 2-D convolution (feature_group_count = 4, channel multiplier 2), NHWC, 'same' padding.",
    module("""
func.func @main(%x: tensor<1x5x5x4xf32>, %w: tensor<3x3x1x8xf32>) -> tensor<1x5x5x8xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<1x5x5x4xf32>, tensor<3x3x1x8xf32>) -> tensor<1x5x5x8xf32>
  return %0 : tensor<1x5x5x8xf32>
}
"""),
    [dyadic(70, (1, 5, 5, 4), -4, 4, 4), dyadic(71, (3, 3, 1, 8), -2, 2, 4)],
    lambda x, w: [conv2d_nhwc_ref(x, w, (1, 1), [(1, 1), (1, 1)], groups=4)],
    [np.float32],
)

# =============================================================================================
# Gather / scatter.

case(
    "gather_take_along_axis",
    "take_along_axis(x, idx, axis=1) as a gather: full (row, idx) coordinates built with iota + concatenate.",
    module("""
func.func @main(%x: tensor<4x5xf32>, %idx: tensor<4x3xi32>) -> tensor<4x3xf32> {
  %rows = stablehlo.iota dim = 0 : tensor<4x3x1xi32>
  %cols = stablehlo.reshape %idx : (tensor<4x3xi32>) -> tensor<4x3x1xi32>
  %coords = stablehlo.concatenate %rows, %cols, dim = 2 : (tensor<4x3x1xi32>, tensor<4x3x1xi32>) -> tensor<4x3x2xi32>
  %0 = "stablehlo.gather"(%x, %coords) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>} : (tensor<4x5xf32>, tensor<4x3x2xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
"""),
    [normal(72, (4, 5)), ints(73, (4, 3), 0, 4)],
    lambda x, idx: [np.take_along_axis(x, idx.astype(np.int64), axis=1)],
    [np.float32],
)

case(
    "gather_rows",
    "Row gather (embedding lookup): 10x4 table, 6 row indices with repeats, slice_sizes [1, 4].",
    module("""
func.func @main(%table: tensor<10x4xf32>, %idx: tensor<6xi32>) -> tensor<6x4xf32> {
  %0 = "stablehlo.gather"(%table, %idx) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>} : (tensor<10x4xf32>, tensor<6xi32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}
"""),
    [normal(74, (10, 4)), np.array([3, 0, 9, 3, 5, 1], np.int32)],
    lambda t, idx: [t[idx.astype(np.int64)]],
    [np.float32],
)


def scatter_add_ref(operand: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> list[np.ndarray]:
    out = np.array(operand, dtype=np.float64 if operand.dtype.kind == "f" else np.int64)
    np.add.at(out, idx.reshape(-1).astype(np.int64), upd)
    return [out]


case(
    "scatter_add_f32",
    "scatter with an add body into rows of a 6x3 tensor, duplicate indices accumulate (dyadic values: exact).",
    module("""
func.func @main(%operand: tensor<6x3xf32>, %idx: tensor<5x1xi32>, %upd: tensor<5x3xf32>) -> tensor<6x3xf32> {
  %0 = "stablehlo.scatter"(%operand, %idx, %upd) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false} : (tensor<6x3xf32>, tensor<5x1xi32>, tensor<5x3xf32>) -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}
"""),
    [dyadic(75, (6, 3)), np.array([[1], [4], [1], [0], [1]], np.int32), dyadic(76, (5, 3))],
    scatter_add_ref,
    [np.float32],
)

case(
    "scatter_add_i32_histogram",
    "1-D scatter-add of ones into a zero i32 tensor: a histogram of 20 bin indices.",
    module("""
func.func @main(%idx: tensor<20xi32>) -> tensor<8xi32> {
  %zeros = stablehlo.constant dense<0> : tensor<8xi32>
  %ones = stablehlo.constant dense<1> : tensor<20xi32>
  %idx2 = stablehlo.reshape %idx : (tensor<20xi32>) -> tensor<20x1xi32>
  %0 = "stablehlo.scatter"(%zeros, %idx2, %ones) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false} : (tensor<8xi32>, tensor<20x1xi32>, tensor<20xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
"""),
    [ints(77, (20,), 0, 7)],
    lambda idx: [np.bincount(idx.astype(np.int64), minlength=8)],
    [np.int32],
)

# =============================================================================================
# Sort.

case(
    "sort_f32",
    "Single-operand sort of each row of a 4x8 f32 tensor, ascending (comparator LT).",
    module("""
func.func @main(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64, is_stable = false} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
"""),
    [normal(78, (4, 8))],
    lambda a: [np.sort(a, axis=1)],
    [np.float32],
)

case(
    "sort_descending_i32",
    "Single-operand sort along dimension 0 of a 6x3 i32 tensor, descending (comparator GT).",
    module("""
func.func @main(%a: tensor<6x3xi32>) -> tensor<6x3xi32> {
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %c = stablehlo.compare GT, %x, %y, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = false} : (tensor<6x3xi32>) -> tensor<6x3xi32>
  return %0 : tensor<6x3xi32>
}
"""),
    [ints(79, (6, 3), -20, 20)],
    lambda a: [-np.sort(-i64(a)[0], axis=0)],
    [np.int32],
)

case(
    "sort_key_value",
    "Two-operand sort: distinct f32 keys carry i32 values (argsort-like); comparator on keys only.",
    module("""
func.func @main(%k: tensor<10xf32>, %v: tensor<10xi32>) -> (tensor<10xf32>, tensor<10xi32>) {
  %0:2 = "stablehlo.sort"(%k, %v) ({
  ^bb0(%k1: tensor<f32>, %k2: tensor<f32>, %v1: tensor<i32>, %v2: tensor<i32>):
    %c = stablehlo.compare LT, %k1, %k2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = false} : (tensor<10xf32>, tensor<10xi32>) -> (tensor<10xf32>, tensor<10xi32>)
  return %0#0, %0#1 : tensor<10xf32>, tensor<10xi32>
}
"""),
    [normal(92, (10,)), np.arange(10, dtype=np.int32)],
    lambda k, v: [np.sort(k), v[np.argsort(k)]],
    [np.float32, np.int32],
)

case(
    "sort_key_value_stable",
    "Two-operand stable sort: i32 keys (with duplicates) carry f32 values; comparator on keys only.",
    module("""
func.func @main(%k: tensor<12xi32>, %v: tensor<12xf32>) -> (tensor<12xi32>, tensor<12xf32>) {
  %0:2 = "stablehlo.sort"(%k, %v) ({
  ^bb0(%k1: tensor<i32>, %k2: tensor<i32>, %v1: tensor<f32>, %v2: tensor<f32>):
    %c = stablehlo.compare LT, %k1, %k2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<12xi32>, tensor<12xf32>) -> (tensor<12xi32>, tensor<12xf32>)
  return %0#0, %0#1 : tensor<12xi32>, tensor<12xf32>
}
"""),
    [ints(80, (12,), 0, 4), np.arange(12, dtype=np.float32) + np.float32(0.5)],
    lambda k, v: [k[np.argsort(k, kind="stable")], v[np.argsort(k, kind="stable")]],
    [np.int32, np.float32],
)

# =============================================================================================
# Control flow.

case(
    "while_sum_to_n",
    "while loop summing 1..n (n is a runtime i32 scalar).",
    module("""
func.func @main(%n: tensor<i32>) -> tensor<i32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %0:2 = stablehlo.while(%i = %one, %acc = %zero) : tensor<i32>, tensor<i32>
   cond {
    %p = stablehlo.compare LE, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %acc2 = stablehlo.add %acc, %i : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %acc2 : tensor<i32>, tensor<i32>
  }
  return %0#1 : tensor<i32>
}
"""),
    [np.array(100, np.int32)],
    lambda n: [np.array(int(n) * (int(n) + 1) // 2)],
    [np.int32],
)

case(
    "while_factorial_i64",
    "while loop computing n! in i64 (n = 20, the largest factorial that fits).",
    module("""
func.func @main(%n: tensor<i64>) -> tensor<i64> {
  %one = stablehlo.constant dense<1> : tensor<i64>
  %0:2 = stablehlo.while(%i = %n, %acc = %one) : tensor<i64>, tensor<i64>
   cond {
    %p = stablehlo.compare GT, %i, %one, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %acc2 = stablehlo.multiply %acc, %i : tensor<i64>
    %i2 = stablehlo.subtract %i, %one : tensor<i64>
    stablehlo.return %i2, %acc2 : tensor<i64>, tensor<i64>
  }
  return %0#1 : tensor<i64>
}
"""),
    [np.array(20, np.int64)],
    lambda n: [np.array(math.factorial(int(n)), dtype=object)],
    [np.int64],
)

case(
    "while_power_f32",
    "while loop computing x**n elementwise by repeated multiplication (tensor loop state).",
    module("""
func.func @main(%x: tensor<5xf32>, %n: tensor<i32>) -> tensor<5xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %ones = stablehlo.constant dense<1.000000e+00> : tensor<5xf32>
  %0:2 = stablehlo.while(%i = %zero, %acc = %ones) : tensor<i32>, tensor<5xf32>
   cond {
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %acc2 = stablehlo.multiply %acc, %x : tensor<5xf32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %acc2 : tensor<i32>, tensor<5xf32>
  }
  return %0#1 : tensor<5xf32>
}
"""),
    [np.array([1.5, -0.75, 1.1, 0.9, -1.25], np.float32), np.array(7, np.int32)],
    lambda x, n: [f64(x)[0] ** int(n)],
    [np.float32],
)

CASE_PROGRAM = """
func.func @main(%index: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.case"(%index) ({
    %r = stablehlo.add %x, %x : tensor<4xf32>
    stablehlo.return %r : tensor<4xf32>
  }, {
    %r = stablehlo.multiply %x, %x : tensor<4xf32>
    stablehlo.return %r : tensor<4xf32>
  }, {
    %r = stablehlo.negate %x : tensor<4xf32>
    stablehlo.return %r : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def case_ref(index: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    (x,) = f64(x)
    branches = [lambda: x + x, lambda: x * x, lambda: -x]
    i = int(index)
    return [branches[i if 0 <= i < len(branches) else len(branches) - 1]()]


case(
    "case_index",
    "stablehlo.case with three branches (x+x, x*x, -x) selected by a runtime index (1).",
    module(CASE_PROGRAM),
    [np.array(1, np.int32), np.array([1.5, -2.0, 0.25, 3.0], np.float32)],
    case_ref,
    [np.float32],
)

case(
    "case_index_out_of_range",
    "stablehlo.case with an out-of-range index (5): StableHLO runs the last branch.",
    module(CASE_PROGRAM),
    [np.array(5, np.int32), np.array([1.5, -2.0, 0.25, 3.0], np.float32)],
    case_ref,
    [np.float32],
)

case(
    "if_scalar_predicate",
    "stablehlo.if on a computed i1 predicate (sum of x > 0) choosing between two results.",
    module("""
func.func @main(%x: tensor<6xf32>) -> tensor<6xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
  %p = stablehlo.compare GT, %sum, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %0 = "stablehlo.if"(%p) ({
    %r = stablehlo.exponential %x : tensor<6xf32>
    stablehlo.return %r : tensor<6xf32>
  }, {
    %r = stablehlo.abs %x : tensor<6xf32>
    stablehlo.return %r : tensor<6xf32>
  }) : (tensor<i1>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
"""),
    [np.array([0.5, -1.0, 2.0, -0.25, 1.0, -1.5], np.float32)],
    lambda x: [np.exp(f64(x)[0]) if f64(x)[0].sum() > 0 else np.abs(f64(x)[0])],
    [np.float32],
)

# =============================================================================================
# Dynamic shapes.

case(
    "dynamic_elementwise_f32",
    "Elementwise a*b + a on tensor<?xf32> arguments (runtime length 7).",
    module("""
func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<?xf32>
  %1 = stablehlo.add %0, %a : tensor<?xf32>
  return %1 : tensor<?xf32>
}
"""),
    [normal(81, (7,)), normal(82, (7,))],
    lambda a, b: [f64(a)[0] * f64(b)[0] + f64(a)[0]],
    [np.float32],
    dynamic=True,
)

case(
    "dynamic_get_dimension_size",
    "get_dimension_size of a tensor<?x3xf32> argument, plus a reduce over the dynamic dimension.",
    module("""
func.func @main(%a: tensor<?x3xf32>) -> (tensor<i32>, tensor<3xf32>) {
  %0 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %1 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<?x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1 : tensor<i32>, tensor<3xf32>
}
"""),
    [dyadic(83, (5, 3))],
    lambda a: [np.array(a.shape[0]), f64(a)[0].sum(axis=0)],
    [np.int32, np.float32],
    dynamic=True,
)

case(
    "dynamic_softmax_rows",
    "Row softmax of a tensor<?x8xf32> (dynamic batch): get_dimension_size, dynamic_broadcast_in_dim "
    "(with known_nonexpanding_dimensions) of the row max and row sum.",
    module("""
func.func @main(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x8xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %c8 = stablehlo.constant dense<8> : tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %c8, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %max = stablehlo.reduce(%a init: %neg_inf) applies stablehlo.maximum across dimensions = [1] : (tensor<?x8xf32>, tensor<f32>) -> tensor<?xf32>
  %max_b = stablehlo.dynamic_broadcast_in_dim %max, %shape, dims = [0] {known_nonexpanding_dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x8xf32>
  %shifted = stablehlo.subtract %a, %max_b : tensor<?x8xf32>
  %exp = stablehlo.exponential %shifted : tensor<?x8xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %sum = stablehlo.reduce(%exp init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<?x8xf32>, tensor<f32>) -> tensor<?xf32>
  %sum_b = stablehlo.dynamic_broadcast_in_dim %sum, %shape, dims = [0] {known_nonexpanding_dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x8xf32>
  %0 = stablehlo.divide %exp, %sum_b : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
"""),
    [normal(84, (3, 8))],
    lambda a: softmax_ref(a, axis=1),
    [np.float32],
    dynamic=True,
)

case(
    "dynamic_matmul",
    "dot_general of a tensor<?x4xf32> (dynamic rows) with a static 4x3 weight, plus a bias broadcast.",
    module("""
func.func @main(%a: tensor<?x4xf32>, %w: tensor<4x3xf32>, %bias: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %c3 = stablehlo.constant dense<3> : tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %c3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %b = stablehlo.dynamic_broadcast_in_dim %bias, %shape, dims = [1] : (tensor<3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %1 = stablehlo.add %0, %b : tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}
"""),
    [dyadic(85, (6, 4), -4, 4, 4), dyadic(86, (4, 3), -4, 4, 4), dyadic(87, (3,), -4, 4, 4)],
    lambda a, w, b: [f64(a)[0] @ f64(w)[0] + f64(b)[0]],
    [np.float32],
    dynamic=True,
)

# =============================================================================================
# Small composite programs.

case(
    "mlp_layer_relu",
    "Dense layer: dot_general + bias broadcast + relu (maximum with 0) on a 4x8 batch.",
    module("""
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<6xf32>) -> tensor<4x6xf32>
  %2 = stablehlo.add %0, %1 : tensor<4x6xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<4x6xf32>
  %3 = stablehlo.maximum %2, %zero : tensor<4x6xf32>
  return %3 : tensor<4x6xf32>
}
"""),
    [dyadic(88, (4, 8), -2, 2, 4), dyadic(89, (8, 6), -2, 2, 4), dyadic(90, (6,), -2, 2, 4)],
    lambda x, w, b: [np.maximum(f64(x)[0] @ f64(w)[0] + f64(b)[0], 0.0)],
    [np.float32],
)

case(
    "layer_norm_f32",
    "Layer normalisation over the last dimension: mean, variance, rsqrt, scale (2x16 f32).",
    module("""
func.func @main(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %n = stablehlo.constant dense<1.600000e+01> : tensor<2xf32>
  %eps = stablehlo.constant dense<9.99999974E-6> : tensor<2xf32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x16xf32>, tensor<f32>) -> tensor<2xf32>
  %mean = stablehlo.divide %sum, %n : tensor<2xf32>
  %mean_b = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<2xf32>) -> tensor<2x16xf32>
  %d = stablehlo.subtract %x, %mean_b : tensor<2x16xf32>
  %sq = stablehlo.multiply %d, %d : tensor<2x16xf32>
  %ssum = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x16xf32>, tensor<f32>) -> tensor<2xf32>
  %var = stablehlo.divide %ssum, %n : tensor<2xf32>
  %ve = stablehlo.add %var, %eps : tensor<2xf32>
  %inv = stablehlo.rsqrt %ve : tensor<2xf32>
  %inv_b = stablehlo.broadcast_in_dim %inv, dims = [0] : (tensor<2xf32>) -> tensor<2x16xf32>
  %0 = stablehlo.multiply %d, %inv_b : tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}
"""),
    [normal(91, (2, 16)) * np.float32(2.0) + np.float32(1.0)],
    lambda x: [layer_norm_ref(x)],
    [np.float32],
)


def layer_norm_ref(x: np.ndarray) -> np.ndarray:
    (x,) = f64(x)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + float(np.float32(1e-5)))


# =============================================================================================
# Machinery: compute, write, check.


def cast_output(value, dtype: type) -> np.ndarray:
    arr = np.asarray(value)
    dt = np.dtype(dtype)
    if dt.kind in "iu" and arr.dtype == object:
        return wrap_int(arr, dtype)
    if dt.kind in "iu":
        return wrap_int(arr.astype(np.int64), dtype) if arr.dtype.kind in "iu" else arr.astype(dt)
    if dt == np.bool_:
        return arr.astype(np.bool_)
    with np.errstate(over="ignore"):  # f64 -> f16 overflow to inf is the intended rounding
        return arr.astype(dt)


def compute_expected(c: Case) -> list[np.ndarray]:
    if c.reference == REFERENCE_INTERPRETER:
        outs = run_interpreter(c.mlir, c.inputs, timeout=600)
    else:
        assert c.ref is not None, c.name
        outs = c.ref(*[np.copy(x) for x in c.inputs])
    if len(outs) != len(c.out_dtypes):
        raise ValueError(
            f"{c.name}: reference gave {len(outs)} outputs, expected {len(c.out_dtypes)}"
        )
    return [
        np.array(cast_output(o, dt), order="C") for o, dt in zip(outs, c.out_dtypes, strict=True)
    ]


_MLIR_ELEMENT_TYPES = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
}


def _split_types(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def main_signature(mlir: str) -> tuple[list[str], list[str]]:
    """(argument types, result types) of func.func @main, from the program text."""
    m = re.search(
        r"func\.func\s+(?:public\s+)?@main\((.*?)\)\s*->\s*(\(.*?\)|tensor<[^>]*>)\s*\{", mlir, re.S
    )
    if not m:
        raise ValueError("no func.func @main(...) -> ... { found")
    args = [a.split(":", 1)[1].strip() for a in _split_types(m.group(1))]
    return args, _split_types(m.group(2))


def _check_type(what: str, type_str: str, value: np.ndarray) -> None:
    m = re.fullmatch(r"tensor<((?:[0-9?]+x)*)([a-z0-9]+)>", type_str)
    if not m:
        raise ValueError(f"{what}: cannot read type {type_str!r}")
    dims = [d for d in m.group(1).split("x") if d]
    dtype = _MLIR_ELEMENT_TYPES.get(m.group(2))
    if dtype is None or np.dtype(dtype) != value.dtype:
        raise ValueError(f"{what}: {type_str} but the array is {value.dtype}")
    if len(dims) != value.ndim or any(
        d != "?" and int(d) != n for d, n in zip(dims, value.shape, strict=True)
    ):
        raise ValueError(f"{what}: {type_str} but the array has shape {value.shape}")


def check_signature(c: Case) -> None:
    """The inputs and expected outputs must match @main's declared types."""
    arg_types, result_types = main_signature(c.mlir)
    if len(arg_types) != len(c.inputs) or len(result_types) != len(c.expected):
        raise ValueError(
            f"{c.name}: @main has {len(arg_types)} args / {len(result_types)} results; "
            f"case has {len(c.inputs)} inputs / {len(c.expected)} outputs"
        )
    for i, (t, x) in enumerate(zip(arg_types, c.inputs, strict=True)):
        _check_type(f"{c.name} input_{i}", t, np.asarray(x))
    for i, (t, x) in enumerate(zip(result_types, c.expected, strict=True)):
        _check_type(f"{c.name} expected_{i}", t, x)
    is_dynamic = "?" in "".join(arg_types + result_types)
    if is_dynamic != c.dynamic:
        raise ValueError(f"{c.name}: dynamic={c.dynamic} but the signature says {is_dynamic}")


def tolerances(c: Case, dtype: np.dtype) -> tuple[float, float]:
    rtol, atol = DEFAULT_TOLERANCES.get(np.dtype(dtype), (0.0, 0.0))
    return (c.rtol if c.rtol is not None else rtol, c.atol if c.atol is not None else atol)


def compare(c: Case, actual: list[np.ndarray], expected: list[np.ndarray]) -> str | None:
    """None if actual matches expected under the case's tolerances, else a message."""
    if len(actual) != len(expected):
        return f"{len(actual)} outputs, expected {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        a = np.asarray(a)
        if a.shape != e.shape:
            return f"output {i}: shape {a.shape}, expected {e.shape}"
        if e.dtype.kind == "f":
            rtol, atol = tolerances(c, e.dtype)
            a64, e64 = a.astype(np.float64), e.astype(np.float64)
            with np.errstate(invalid="ignore"):
                ok = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
            if not ok.all():
                bad = np.argwhere(~ok)[0]
                err = np.abs(a64 - e64)[~ok].max()
                return (
                    f"output {i}: {int((~ok).sum())} mismatches (rtol={rtol}, atol={atol}), "
                    f"first at {tuple(bad)}: {a64[tuple(bad)]!r} vs {e64[tuple(bad)]!r}, "
                    f"max abs err {err:.3g}"
                )
        else:
            if a.astype(e.dtype).tolist() != e.tolist():
                bad = np.argwhere(a.astype(e.dtype) != e)[0]
                return (
                    f"output {i}: mismatch at {tuple(bad)}: {a[tuple(bad)]!r} vs {e[tuple(bad)]!r}"
                )
    return None


def _npz_equal(path: str, arrays: dict[str, np.ndarray]) -> bool:
    if not os.path.exists(path):
        return False
    try:
        with np.load(path) as old:
            if sorted(old.files) != sorted(arrays):
                return False
            for k, v in arrays.items():
                o = old[k]
                if o.dtype != v.dtype or o.shape != v.shape or o.tobytes() != v.tobytes():
                    return False
    except Exception:
        return False
    return True


def _write_text(path: str, text: str) -> None:
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def write_case(c: Case) -> None:
    _write_text(os.path.join(CASES_DIR, c.name + ".mlir"), c.mlir)
    arrays = {f"input_{i}": np.asarray(x) for i, x in enumerate(c.inputs)}
    arrays.update({f"expected_{i}": x for i, x in enumerate(c.expected)})
    path = os.path.join(CASES_DIR, c.name + ".npz")
    # Rewrite only on a content change: npz (zip) files carry timestamps.
    if _npz_equal(path, arrays):
        return
    total = sum(a.nbytes for a in arrays.values())
    (np.savez_compressed if total > COMPRESS_ABOVE_BYTES else np.savez)(path, **arrays)


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def corpus_toml(cases: list[Case]) -> str:
    lines = [
        "# Bundled StableHLO conformance corpus. Generated by generate.py; do not edit by hand.",
        "# Each [cases.<name>] has cases/<name>.mlir (entry @main) and cases/<name>.npz",
        "# (input_0.., expected_0..). reference: how the expected outputs were computed.",
        "# Tolerances not given here are the suite defaults (f32 rtol=1e-5 atol=1e-6,",
        "# f16 rtol=1e-2 atol=1e-3; integers and booleans compare exactly).",
        "",
    ]
    for c in sorted(cases, key=lambda c: c.name):
        lines.append(f"[cases.{c.name}]")
        lines.append(f"description = {_toml_str(c.description)}")
        lines.append(f"reference = {_toml_str(c.reference)}")
        if c.rtol is not None:
            lines.append(f"rtol = {c.rtol!r}")
        if c.atol is not None:
            lines.append(f"atol = {c.atol!r}")
        if c.tolerance_reason:
            lines.append(f"tolerance_reason = {_toml_str(c.tolerance_reason)}")
        if c.dynamic:
            lines.append("dynamic = true")
        lines.append("")
    return "\n".join(lines)


def check_interpreter(cases: list[Case], jobs: int, timeout: float) -> int:
    """Cross-check every case's expected outputs against the StableHLO interpreter."""
    print(f"Cross-checking {len(cases)} cases against the StableHLO reference interpreter ...")

    def one(c: Case) -> tuple[Case, str, str]:
        t0 = time.monotonic()
        try:
            outs = run_interpreter(c.mlir, c.inputs, timeout=timeout)
        except InterpreterError as e:
            return c, "unsupported" if e.unsupported_op else "error", e.reason
        msg = compare(c, outs, c.expected)
        dt = time.monotonic() - t0
        if msg is None:
            return c, "confirmed", f"{dt:.1f}s"
        return c, "MISMATCH", msg

    counts: dict[str, int] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for c, status, detail in pool.map(one, cases):
            counts[status] = counts.get(status, 0) + 1
            note = (
                " (expected values are from the interpreter)"
                if (c.reference == REFERENCE_INTERPRETER)
                else ""
            )
            print(f"  {status:11s} {c.name}: {detail}{note}")
    print("interpreter cross-check: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if counts.get("MISMATCH", 0) else 0


def verify_iree(cases: list[Case]) -> int:
    """Well-formedness check: compile and run every case with IREE (llvm-cpu) and compare.

    IREE's results are never written anywhere; this only tells whether IREE accepts the
    program and agrees with the independent reference.
    """
    import iree.runtime as rt
    from iree.compiler.api import Output, Session, Source

    print(f"IREE well-formedness check (llvm-cpu, local-task) of {len(cases)} cases ...")
    failures = 0
    config = rt.Config("local-task")
    for c in cases:
        t0 = time.monotonic()
        session = Session()
        session.set_flags(
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=host",
            "--iree-input-type=stablehlo",
        )
        inv = session.invocation()
        inv.enable_console_diagnostics()
        try:
            if not inv.parse_source(Source.wrap_buffer(session, c.mlir.encode())):
                raise RuntimeError("parse failed")
            if not inv.execute():
                raise RuntimeError("compile failed (see diagnostics above)")
            out = Output.open_membuffer()
            inv.output_vm_bytecode(out)
            vmfb = bytes(out.map_memory())
        except Exception as e:
            failures += 1
            print(f"  FAIL-COMPILE {c.name}: {e}")
            continue
        try:
            vm_module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
            ctx = rt.SystemContext(vm_modules=[vm_module], config=config)
            res = ctx.modules.module["main"](*[np.asarray(x) for x in c.inputs])
            if not isinstance(res, (list, tuple)):
                res = [res]
            actual = [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in res]
        except Exception as e:
            failures += 1
            print(f"  FAIL-RUN     {c.name}: {type(e).__name__}: {e}")
            continue
        msg = compare(c, actual, c.expected)
        if msg:
            failures += 1
            print(f"  FAIL-NUMERIC {c.name}: {msg}")
        else:
            print(f"  ok           {c.name} ({time.monotonic() - t0:.1f}s)")
    print(f"IREE well-formedness check: {len(cases) - failures} ok, {failures} failed")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="process only these cases")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--no-write", action="store_true", help="do not write any file")
    parser.add_argument(
        "--check-interpreter",
        action="store_true",
        help="cross-check every expected output against the StableHLO interpreter",
    )
    parser.add_argument(
        "--interpreter-timeout",
        type=float,
        default=300.0,
        help="per-case interpreter timeout in seconds (default 300)",
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="parallel interpreter processes"
    )
    parser.add_argument(
        "--verify-iree",
        action="store_true",
        help="well-formedness check: compile and run each case with IREE llvm-cpu",
    )
    args = parser.parse_args(argv)

    cases = CASES
    if args.list:
        for c in cases:
            print(f"{c.name:36s} {c.description}")
        return 0
    if args.only:
        unknown = set(args.only) - {c.name for c in cases}
        if unknown:
            parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c.name in args.only]

    for c in cases:
        c.expected = compute_expected(c)
        check_signature(c)

    if not args.no_write:
        os.makedirs(CASES_DIR, exist_ok=True)
        for c in cases:
            write_case(c)
        if not args.only:
            known = {c.name for c in CASES}
            for fname in os.listdir(CASES_DIR):
                stem, ext = os.path.splitext(fname)
                if ext in (".mlir", ".npz") and stem not in known:
                    os.remove(os.path.join(CASES_DIR, fname))
            _write_text(CORPUS_TOML, corpus_toml(CASES))
        print(f"wrote {len(cases)} cases to {os.path.relpath(CASES_DIR)}")

    rc = 0
    if args.check_interpreter:
        rc |= check_interpreter(cases, args.jobs, args.interpreter_timeout)
    if args.verify_iree:
        rc |= verify_iree(cases)
    return rc


if __name__ == "__main__":
    sys.exit(main())
