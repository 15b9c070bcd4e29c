"""Elementwise ops over every dtype torch and IREE share: f32, f16, bf16, i64, i32, bool."""

import torch
from _tables import nonzero_int, op_case, positive, tensor

F32, F16, BF16, I64, I32, BOOL = (
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.bool,
)
SHAPE = (4, 6)

# name: (function, input maker, dtypes)
UNARY_FLOAT = {
    "neg": (torch.neg, tensor, (F32, F16, BF16)),
    "abs": (torch.abs, tensor, (F32, F16, BF16)),
    "exp": (torch.exp, tensor, (F32, F16, BF16)),
    "log": (torch.log, positive, (F32, F16, BF16)),
    "sqrt": (torch.sqrt, positive, (F32, F16, BF16)),
    "rsqrt": (torch.rsqrt, positive, (F32, F16)),
    "reciprocal": (torch.reciprocal, positive, (F32, F16)),
    "tanh": (torch.tanh, tensor, (F32, F16, BF16)),
    "sigmoid": (torch.sigmoid, tensor, (F32, F16, BF16)),
    "sin": (torch.sin, tensor, (F32, F16)),
    "cos": (torch.cos, tensor, (F32, F16)),
    "erf": (torch.erf, tensor, (F32,)),
    "floor": (torch.floor, tensor, (F32, F16)),
    "ceil": (torch.ceil, tensor, (F32,)),
    "round": (torch.round, tensor, (F32,)),
    "relu": (torch.relu, tensor, (F32, F16, BF16)),
    "gelu": (torch.nn.functional.gelu, tensor, (F32, F16)),
    "gelu_tanh": (lambda x: torch.nn.functional.gelu(x, approximate="tanh"), tensor, (F32,)),
    "silu": (torch.nn.functional.silu, tensor, (F32, BF16)),
    "softplus": (torch.nn.functional.softplus, tensor, (F32,)),
    "clamp": (lambda x: torch.clamp(x, -0.5, 0.75), tensor, (F32, F16, BF16)),
    "sign": (torch.sign, tensor, (F32,)),
    "square": (torch.square, tensor, (F32, BF16)),
}

BINARY_FLOAT = {
    "add": (torch.add, (F32, F16, BF16, I64, I32)),
    "sub": (torch.sub, (F32, F16, BF16, I64, I32)),
    "mul": (torch.mul, (F32, F16, BF16, I64, I32)),
    "maximum": (torch.maximum, (F32, F16, BF16, I64, I32)),
    "minimum": (torch.minimum, (F32, F16, I64, I32)),
    "gt": (torch.gt, (F32, F16, I64, I32)),
    "eq_self": (lambda a, b: torch.eq(a, torch.where(a > b, a, b)), (F32, I64, I32)),
    "where": (lambda a, b: torch.where(a > b, a, b * 2), (F32, F16, BF16, I64, I32)),
    "add_broadcast": (lambda a, b: a + b[:1], (F32, I64)),
}

CASES = []
for name, (fn, make, dtypes) in UNARY_FLOAT.items():
    for dtype in dtypes:
        CASES.append(op_case(name, fn, make(SHAPE, dtype), dtype=dtype))
for name, (fn, dtypes) in BINARY_FLOAT.items():
    for dtype in dtypes:
        CASES.append(
            op_case(name, fn, tensor(SHAPE, dtype, 1), tensor(SHAPE, dtype, 2), dtype=dtype)
        )

for dtype in (F32, F16):
    CASES.append(
        op_case("div", torch.div, tensor(SHAPE, dtype, 1), positive(SHAPE, dtype, 2), dtype=dtype)
    )
    CASES.append(
        op_case("pow", torch.pow, positive(SHAPE, dtype, 1), tensor(SHAPE, dtype, 2), dtype=dtype)
    )
for dtype in (I64, I32):
    CASES.append(
        op_case(
            "floor_divide",
            torch.floor_divide,
            tensor(SHAPE, dtype, 1),
            nonzero_int(SHAPE, dtype, 2),
            dtype=dtype,
        )
    )
    CASES.append(
        op_case(
            "remainder",
            torch.remainder,
            tensor(SHAPE, dtype, 1),
            nonzero_int(SHAPE, dtype, 2),
            dtype=dtype,
        )
    )
    CASES.append(
        op_case(
            "bitwise_and",
            torch.bitwise_and,
            tensor(SHAPE, dtype, 1),
            tensor(SHAPE, dtype, 2),
            dtype=dtype,
        )
    )
    CASES.append(op_case("abs", torch.abs, tensor(SHAPE, dtype, 3), dtype=dtype))
    CASES.append(op_case("neg", torch.neg, tensor(SHAPE, dtype, 3), dtype=dtype))

for name, fn in {
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
    "where_bool": lambda a, b: torch.where(a, b, ~b),
    "bitwise_not": lambda a, b: torch.bitwise_not(a) | b,
}.items():
    CASES.append(op_case(name, fn, tensor(SHAPE, BOOL, 1), tensor(SHAPE, BOOL, 2), dtype=BOOL))

# Casts between the dtypes.
for src, dst in (
    (F32, F16),
    (F32, BF16),
    (F16, F32),
    (BF16, F32),
    (F32, I32),
    (I64, F32),
    (I32, I64),
    (BOOL, F32),
    (F32, BOOL),
):
    CASES.append(
        op_case(
            f"cast_to_{dst}".replace("torch.", ""),
            lambda x, dst=dst: x.to(dst),
            (tensor(SHAPE, src, 4) * (3 if src.is_floating_point else 1)).relu()
            if src == F32
            else tensor(SHAPE, src, 4),
            dtype=src,
            rtol=1e-2 if dst in (F16, BF16) or src in (F16, BF16) else 0.0,
            atol=1e-2 if dst in (F16, BF16) or src in (F16, BF16) else 0.0,
        )
    )
