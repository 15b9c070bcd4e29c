"""Indexing, gather and scatter, views and layout."""

import torch
from _tables import op_case, tensor

F32, I64, BF16 = torch.float32, torch.int64, torch.bfloat16
X = tensor((5, 6, 7), seed=31)


def idx(shape, high, seed):
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))


INDEXING = {
    "slice": (lambda x: x[1:4, ::2, -3:], (X,)),
    "select": (lambda x: x[:, 2], (X,)),
    "index_tensor": (lambda x, i: x[i], (X, idx((4,), 5, 1))),
    "index_two_dims": (lambda x, i, j: x[i, :, j], (X, idx((3,), 5, 1), idx((3,), 7, 2))),
    "index_select": (lambda x, i: torch.index_select(x, 1, i), (X, idx((4,), 6, 3))),
    "gather": (lambda x, i: torch.gather(x, 2, i), (X, idx((5, 6, 3), 7, 4))),
    "take_along_dim": (lambda x, i: torch.take_along_dim(x, i, dim=1), (X, idx((5, 2, 7), 6, 5))),
    "masked_fill": (lambda x: x.masked_fill(x > 0.5, -1.0), (X,)),
    "masked_select_sum": (lambda x: torch.where(x > 0, x, torch.zeros_like(x)).sum(dim=0), (X,)),
    "scatter": (
        lambda x, i, s: torch.scatter(x, 1, i, s),
        (X, idx((5, 2, 7), 6, 6), tensor((5, 2, 7), seed=7)),
    ),
    "scatter_add": (
        lambda x, i, s: torch.scatter_add(x, 0, i, s),
        (X, idx((3, 6, 7), 5, 8), tensor((3, 6, 7), seed=9)),
    ),
    "scatter_reduce_amax": (
        lambda x, i, s: torch.scatter_reduce(x, 2, i, s, reduce="amax"),
        (X, idx((5, 6, 4), 7, 10), tensor((5, 6, 4), seed=11)),
    ),
    "index_put": (
        lambda x, i, v: torch.index_put(x, (i,), v),
        (X, torch.tensor([0, 3]), tensor((2, 6, 7), seed=12)),
    ),
    "index_put_accumulate": (
        lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
        (X, torch.tensor([1, 1, 4]), tensor((3, 6, 7), seed=13)),
    ),
    "index_add": (
        lambda x, i, s: x.index_add(1, i, s),
        (X, torch.tensor([0, 5, 2]), tensor((5, 3, 7), seed=14)),
    ),
    "embedding_lookup": (
        lambda w, i: torch.nn.functional.embedding(i, w),
        (tensor((10, 4), seed=15), idx((3, 5), 10, 16)),
    ),
    "one_hot": (
        lambda i: torch.nn.functional.one_hot(i, 6).to(torch.float32) * 2 - 1,
        (idx((4, 5), 6, 17),),
    ),
    "where_scalar": (lambda x: torch.where(x > 0, x, 0.25), (X,)),
    "tril": (lambda x: torch.tril(x[0]), (X,)),
    "triu_diag": (lambda x: torch.triu(x[0], diagonal=1) + 1, (X,)),
    "flip": (lambda x: torch.flip(x, dims=(0, 2)), (X,)),
    "roll": (lambda x: torch.roll(x, shifts=2, dims=1), (X,)),
    "arange_add": (lambda x: x + torch.arange(7, dtype=x.dtype), (X,)),
}

LAYOUT = {
    "reshape": lambda x: x.reshape(6, 35),
    "view_flatten": lambda x: x.view(5, -1),
    "flatten": lambda x: torch.flatten(x, 1),
    "unflatten": lambda x: x.unflatten(2, (7, 1)),
    "permute": lambda x: x.permute(2, 0, 1),
    "transpose": lambda x: x.transpose(0, 2),
    "transpose_contiguous": lambda x: x.transpose(1, 2).contiguous() * 2,
    "squeeze_unsqueeze": lambda x: x.unsqueeze(1).squeeze(1).unsqueeze(-1),
    "expand": lambda x: x[:, :1].expand(5, 4, 7),
    "repeat": lambda x: x[:2].repeat(2, 1, 3),
    "cat": lambda x: torch.cat([x, x * 2], dim=1),
    "stack": lambda x: torch.stack([x, -x], dim=0),
    "split": lambda x: torch.split(x, [2, 4], dim=1),
    "chunk": lambda x: torch.chunk(x, 3, dim=2),
    "unbind": lambda x: torch.unbind(x, dim=0),
    "narrow": lambda x: x.narrow(2, 1, 4),
    "movedim": lambda x: torch.movedim(x, 0, -1),
    "diagonal": lambda x: torch.diagonal(x, dim1=1, dim2=2),
    "broadcast_to": lambda x: torch.broadcast_to(x[:1], (3, 6, 7)),
    "t_mm": lambda x: x[0].t() @ x[1],
}

CASES = []
for name, (fn, args) in INDEXING.items():
    CASES.append(op_case(name, fn, *args, dtype=F32))
for name, fn in LAYOUT.items():
    CASES.append(op_case(name, fn, X, dtype=F32))
for name in ("permute", "cat", "reshape", "transpose"):
    CASES.append(op_case(name, LAYOUT[name], tensor((5, 6, 7), I64, 32), dtype=I64))
CASES.append(op_case("cat", LAYOUT["cat"], tensor((5, 6, 7), BF16, 32), dtype=BF16))
CASES.append(
    op_case(
        "gather", INDEXING["gather"][0], tensor((5, 6, 7), I64, 33), idx((5, 6, 3), 7, 4), dtype=I64
    )
)
