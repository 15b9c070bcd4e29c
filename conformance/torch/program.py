"""Programs beyond one op: torch.cond, dynamic shapes (torch.export.Dim), in-place ops and
buffer mutation, several outputs and pytrees of inputs and outputs."""

import torch
from _tables import tensor

from iree_conformance.frontends.torch_export import case, module_case

nn = torch.nn
Dim = torch.export.Dim


# torch.cond: both branches are traced; the predicate picks one at run time.
class Cond(nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x.sin() * 2, lambda x: x.cos() - 1, (x,))


class CondShape(nn.Module):
    def forward(self, x, y):
        return torch.cond(x.mean() > y.mean(), lambda x, y: x @ y, lambda x, y: x @ (y * 2), (x, y))


# Dynamic shapes.
BATCH = Dim("batch", min=1, max=64)
SEQ = Dim("seq", min=2, max=128)


class DynLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.linear(x))


class DynAttention(nn.Module):
    def forward(self, q, k, v):
        return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


class DynConcat(nn.Module):
    def forward(self, a, b):
        return torch.cat([a, b], dim=0).sum(dim=0), a.shape[0] * b


class DynReshape(nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1).softmax(dim=-1)


# In-place ops and mutation.
class InPlace(nn.Module):
    def forward(self, x):
        y = x.clone()
        y.add_(1.0).mul_(2.0)
        y[0] = 0.5
        return y.relu_()


class MutatesInput(nn.Module):
    def forward(self, x, y):
        y.mul_(2)
        return x + y


class Counter(nn.Module):
    """A buffer updated at each call: a running total, as batch norm's statistics are."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.arange(4, dtype=torch.float32))

    def forward(self, x):
        self.total.add_(x.sum(dim=0))
        return self.total * 2


class RunningMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.full((6,), 0.5))

    def forward(self, x):
        self.mean.mul_(0.9).add_(0.1 * x.mean(dim=0))
        return x - self.mean


class BatchNormTrain(nn.Module):
    """Batch norm in training mode: batch statistics, running statistics mutated."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(6)
        self.bn.train()

    def forward(self, x):
        return self.bn(x)

    def eval(self):  # the export runs in eval mode; this module keeps training's
        return self


class IndexCopy(nn.Module):
    def forward(self, x, v):
        out = x.clone()
        out[1:3] = v
        out[:, 0] += 1
        return out


# Several outputs and pytrees.
class Pytree(nn.Module):
    def forward(self, inputs):
        a, b = inputs["a"], inputs["pair"][0] * inputs["pair"][1]
        return {"sum": a + b, "parts": [a * 2, (b - 1, b.mean())]}


class ManyOutputs(nn.Module):
    def forward(self, x):
        return x.max(dim=1).values, x.min(dim=1).indices, x.sum(), x.t()


class KwargsLike(nn.Module):
    def forward(self, x, scale=None, bias=None):
        return x * scale + bias


CASES = [
    module_case("cond_true", Cond(), lambda: (tensor((3, 4), low=0.1, high=1.0),)),
    module_case("cond_false", Cond(), lambda: (tensor((3, 4), low=-1.0, high=-0.1),)),
    module_case(
        "cond_matmul", CondShape(), lambda: (tensor((3, 4), seed=1), tensor((4, 5), seed=2))
    ),
    module_case(
        "dynamic_batch_linear",
        DynLinear,
        lambda: (tensor((5, 8)),),
        dynamic_shapes=lambda: {"x": {0: BATCH}},
    ),
    module_case(
        "dynamic_seq_attention",
        DynAttention(),
        lambda: tuple(tensor((1, 2, 9, 8), seed=s) for s in (1, 2, 3)),
        dynamic_shapes=lambda: tuple({2: SEQ} for _ in range(3)),
    ),
    module_case(
        "dynamic_concat",
        DynConcat(),
        lambda: (tensor((3, 4), seed=1), tensor((5, 4), seed=2)),
        dynamic_shapes=lambda: ({0: Dim("a", max=32)}, {0: Dim("b", max=32)}),
    ),
    module_case(
        "dynamic_reshape",
        DynReshape(),
        lambda: (tensor((3, 4, 5)),),
        dynamic_shapes=lambda: ({0: BATCH, 1: Dim("rows", max=16)},),
    ),
    module_case("inplace_chain", InPlace(), lambda: (tensor((4, 5)),)),
    module_case(
        "mutates_input", MutatesInput(), lambda: (tensor((4, 5), seed=1), tensor((4, 5), seed=2))
    ),
    module_case("buffer_counter", Counter(), lambda: (tensor((3, 4)),)),
    module_case("buffer_running_mean", RunningMean(), lambda: (tensor((5, 6)),)),
    module_case(
        "batch_norm_train", BatchNormTrain, lambda: (tensor((8, 6)),), rtol=1e-4, atol=1e-4
    ),
    module_case(
        "index_copy", IndexCopy(), lambda: (tensor((5, 4), seed=1), tensor((2, 4), seed=2))
    ),
    module_case(
        "pytree_dict_list",
        Pytree(),
        lambda: (
            {"a": tensor((3, 4), seed=1), "pair": (tensor((3, 4), seed=2), tensor((3, 4), seed=3))},
        ),
    ),
    module_case("many_outputs", ManyOutputs(), lambda: (tensor((4, 6)),)),
    module_case(
        "two_tensor_args",
        KwargsLike(),
        lambda: (tensor((3, 4)), tensor((3, 4), seed=2), tensor((4,), seed=3)),
    ),
]


@case(tensor((4, 4)), tensor((4, 4), seed=1))
def function_case(a, b):
    """A plain function, wrapped in a module for torch.export."""
    return torch.tanh(a @ b) + a


@case(tensor((6,)), dynamic_shapes=({0: Dim("n", min=2, max=100)},))
def dynamic_function(x):
    """A function with a dynamic dim."""
    return torch.cumsum(x, dim=0) * x.shape[0]
