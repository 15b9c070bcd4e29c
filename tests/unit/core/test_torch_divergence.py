"""--bisect-numerics for torch: every FX node's value returned by the decomposed program,
torch eager the reference, the first diverging node named with its op and source line
(frontends/torch_export/divergence.py)."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the torch suite's extra")
pytest.importorskip("iree.turbine", reason="the torch suite's extra")

import torch  # noqa: E402

from iree_conformance.frontends.torch_export.divergence import (  # noqa: E402
    as_tensor,
    bisect_torch,
    widened,
)
from iree_conformance.frontends.torch_export.export import flatten, to_numpy  # noqa: E402


class Chain(torch.nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        z = y * 3
        return torch.tanh(z)


def program_and_inputs():
    x = torch.tensor([[1.0, -2.0, 0.5, -0.25]])
    return torch.export.export(Chain(), (x,)), [x.numpy()]


def eager_values(program, inputs):
    module, _, _ = widened(program)
    with torch.no_grad():
        return [to_numpy(t) for t in flatten(module(*[as_tensor(x) for x in inputs]))]


def test_the_first_diverging_node_is_named_with_its_op_and_line():
    program, inputs = program_and_inputs()
    _, returned, labels = widened(program)
    assert returned == 1 and len(labels) == 3
    mul = next(i for i, label in enumerate(labels) if "aten.mul" in label)

    def perturbed(text, given):  # IREE stand-in: the mul is wrong, and what follows it
        assert "func.func @main" in text
        values = eager_values(program, given)
        for i in range(mul, len(labels)):
            values[returned + i] = values[returned + i] + 1
        values[0] = values[0] + 1
        return values

    report = bisect_torch(program, inputs, perturbed, rtol=1e-3, atol=1e-5)
    assert report.first == labels[mul]
    line = Path(__file__).read_text(encoding="utf-8").splitlines().index("        z = y * 3") + 1
    assert f"test_torch_divergence.py:{line} `z = y * 3`" in report.first
    assert report.summary().startswith(f"first diverging {labels[mul]}: 4/4 elements differ")
    assert "compared against torch eager; its inputs agree" in report.summary()


def test_agreeing_values_say_no_node_diverges():
    program, inputs = program_and_inputs()
    report = bisect_torch(program, inputs, lambda text, given: eager_values(program, given))
    assert report.summary() == (
        "no FX node diverges at the case's tolerance (each dtype's default): 3 FX node "
        "values of the decomposed program compared against torch eager"
    )


def test_a_tolerance_left_unset_is_the_dtypes_default_as_in_the_final_comparison():
    """float32's default (rtol 1e-5, atol 1e-6; model/compare.py) rejects a relative error
    of 1e-4 that a looser fallback (rtol 1e-3) passes: a pt2 file's case sets no tolerance."""
    program, inputs = program_and_inputs()
    _, returned, labels = widened(program)

    def off_by_1e4(text, given):
        values = eager_values(program, given)
        return [v * np.float32(1 + 1e-4) if i >= returned + 1 else v for i, v in enumerate(values)]

    report = bisect_torch(program, inputs, off_by_1e4)  # the case's Tolerance() unset
    assert report.first == labels[1], report.summary()
    assert bisect_torch(program, inputs, off_by_1e4, rtol=1e-3, atol=1e-3).first is None


def test_bfloat16_inputs_reach_torch_by_their_bits():
    x = torch.tensor([[1.0, -2.0, 0.5, -0.25]], dtype=torch.bfloat16)
    program = torch.export.export(Chain(), (x,))
    inputs = [to_numpy(x)]
    report = bisect_torch(program, inputs, lambda text, given: eager_values(program, given))
    assert report.first is None and report.compared == 3
