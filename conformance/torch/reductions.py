"""Reductions, matmul and contractions, softmax, cumulative ops."""

import torch
from _tables import op_case, tensor

F32, F16, BF16, I64, I32 = torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32
X = (4, 5, 6)

REDUCE = {
    "sum_all": (lambda x: x.sum(), (F32, F16, I64, I32)),
    "sum_dim": (lambda x: x.sum(dim=1), (F32, BF16, I64)),
    "sum_keepdim": (lambda x: x.sum(dim=(0, 2), keepdim=True), (F32,)),
    "mean": (lambda x: x.mean(dim=-1), (F32, F16, BF16)),
    "amax": (lambda x: x.amax(dim=1), (F32, F16, I64, I32)),
    "amin": (lambda x: x.amin(dim=2), (F32, I32)),
    "max_dim": (lambda x: torch.max(x, dim=2), (F32,)),  # values and indices
    "argmax": (lambda x: torch.argmax(x, dim=1), (F32, I32)),
    "argmin": (lambda x: torch.argmin(x, dim=-1), (F32,)),
    "prod": (lambda x: torch.prod(x * 0.5 + 1, dim=2), (F32,)),
    "var": (lambda x: torch.var(x, dim=1), (F32,)),
    "std_unbiased": (lambda x: torch.std(x, dim=-1, unbiased=True), (F32,)),
    "norm": (lambda x: torch.linalg.vector_norm(x, dim=-1), (F32,)),
    "logsumexp": (lambda x: torch.logsumexp(x, dim=1), (F32,)),
    "softmax": (lambda x: torch.softmax(x, dim=-1), (F32, F16, BF16)),
    "log_softmax": (lambda x: torch.log_softmax(x, dim=1), (F32,)),
    "cumsum": (lambda x: torch.cumsum(x, dim=1), (F32, I64)),
    "any": (lambda x: (x > 1).any(dim=1), (F32,)),
    "all": (lambda x: (x > -1.5).all(dim=2), (F32,)),
    "topk": (lambda x: torch.topk(x, 3, dim=-1), (F32,)),
    "sort": (lambda x: torch.sort(x, dim=-1), (F32,)),
}

CASES = []
for name, (fn, dtypes) in REDUCE.items():
    for dtype in dtypes:
        r, a = (1e-4, 1e-4) if dtype == F32 else (None, None)
        CASES.append(op_case(name, fn, tensor(X, dtype, 5), dtype=dtype, rtol=r, atol=a))

MATMUL = {
    "mm": (lambda a, b: a @ b, (8, 16), (16, 4)),
    "bmm": (torch.bmm, (3, 8, 16), (3, 16, 4)),
    "matmul_broadcast": (torch.matmul, (2, 3, 8, 16), (16, 5)),
    "matvec": (torch.matmul, (8, 16), (16,)),
    "einsum_attention": (
        lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k),
        (2, 2, 4, 8),
        (2, 2, 6, 8),
    ),
    "linear_fn": (lambda x, w: torch.nn.functional.linear(x, w), (5, 16), (7, 16)),
    "outer": (torch.outer, (6,), (7,)),
    "tensordot": (lambda a, b: torch.tensordot(a, b, dims=([1, 2], [0, 1])), (4, 3, 5), (3, 5, 2)),
}
for name, (fn, sa, sb) in MATMUL.items():
    for dtype in (F32, F16, BF16) if name in ("mm", "bmm") else (F32,):
        r, a = {F32: (1e-4, 1e-4), F16: (1e-2, 5e-2), BF16: (2e-2, 1e-1)}[dtype]
        CASES.append(
            op_case(
                name, fn, tensor(sa, dtype, 6), tensor(sb, dtype, 7), dtype=dtype, rtol=r, atol=a
            )
        )
CASES.append(
    op_case("mm", lambda a, b: a @ b, tensor((8, 16), I64, 6), tensor((16, 4), I64, 7), dtype=I64)
)
CASES.append(
    op_case("mm", lambda a, b: a @ b, tensor((8, 16), I32, 6), tensor((16, 4), I32, 7), dtype=I32)
)
