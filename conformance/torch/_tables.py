"""Helpers of the bundled torch cases: seeded inputs of every dtype, and the tolerance of
each dtype (torch eager and IREE round half-precision results apart)."""

import torch

from iree_conformance.frontends.torch_export import case

TOLERANCE = {
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 2e-2),
}
SHORT = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.bool: "bool",
}


def tensor(shape, dtype=torch.float32, seed=0, low=-2.0, high=2.0):
    """Seeded values: floats uniform in [low, high), integers in [-8, 8) (nonzero where
    they divide), booleans mixed."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) < 0.5
    if not dtype.is_floating_point:
        return torch.randint(-8, 8, shape, generator=g).to(dtype)
    return (torch.rand(shape, generator=g) * (high - low) + low).to(dtype)


def positive(shape, dtype=torch.float32, seed=0):
    return tensor(shape, dtype, seed, 0.25, 3.0)


def nonzero_int(shape, dtype, seed=0):
    t = tensor(shape, dtype, seed)
    return torch.where(t == 0, torch.ones_like(t), t)


def op_case(name, fn, *args, dtype=torch.float32, rtol=None, atol=None, **kwargs):
    """A function case named ``<name>_<dtype>`` with the dtype's tolerance."""
    r, a = TOLERANCE.get(dtype, (0.0, 0.0))
    return case(
        *args,
        name=f"{name}_{SHORT[dtype]}",
        rtol=r if rtol is None else rtol,
        atol=a if atol is None else atol,
        description=f"{name} on {SHORT[dtype]}",
        **kwargs,
    )(fn)
