"""The wheel's light models: onnx's input rule reproduces the shipped outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from iree_conformance.frontends.onnx.light_models import (
    LightModelCase,
    LightModelError,
    light_data_dir,
    load_light_models,
)
from iree_conformance.frontends.onnx.reference import run_onnxruntime

NAMES = [
    "bvlc_alexnet",
    "densenet121",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "shufflenet",
    "squeezenet",
    "vgg19",
    "zfnet512",
]


def cases() -> dict[str, LightModelCase]:
    return {c.name: c for c in load_light_models()}


def test_all_nine_found() -> None:
    found = cases()
    assert sorted(found) == NAMES
    assert found["resnet50"].case_id == "onnx-models/light_resnet50"
    assert found["densenet121"].rtol == 2e-3  # from data/real/test_densenet121/data.json
    assert found["vgg19"].rtol == 1e-3 and found["vgg19"].atol == 1e-7


@pytest.mark.parametrize("name", NAMES)
def test_shipped_output_matches_onnxruntime(name: str) -> None:
    case = cases()[name]
    inputs = case.inputs()
    assert [x.shape for x in inputs] == [(1, 3, 224, 224)]
    actual = run_onnxruntime(case.model_path, inputs)
    expected = case.expected_outputs()
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=case.rtol, atol=case.atol)


def test_inputs_follow_onnx_runner_rule() -> None:
    # onnx's Runner.generate_dummy_data(random=False): arange(n).reshape(shape) / n.
    (x,) = cases()["squeezenet"].inputs()
    n = x.size
    assert x.dtype == np.float32
    assert (
        x.flat[0] == 0
        and x.flat[1] == np.float32(1 / n)
        and x.flat[n - 1] == np.float32((n - 1) / n)
    )


@pytest.mark.parametrize("name", NAMES)
def test_outputs_do_not_depend_on_inputs(name: str) -> None:
    # A fact worth knowing: the light models carry (almost) all-zero weights, so their
    # outputs are the same for any input. They check that architectures compile and
    # run, not numerics, and the suite runs them on the shipped inputs only (a second,
    # random input set would cost a run and check nothing new). If onnx ever ships real
    # weights, this test says so.
    case = cases()[name]
    other = [
        np.random.default_rng(1).uniform(-3, 7, x.shape).astype(x.dtype) for x in case.inputs()
    ]
    for a, e in zip(run_onnxruntime(case.model_path, other), case.expected_outputs(), strict=True):
        np.testing.assert_allclose(a, e, rtol=case.rtol, atol=case.atol)


def test_suite_case_runs_the_shipped_set_at_the_shipped_tolerance() -> None:
    from iree_conformance.suites.onnx_models import light_cases

    by_id = {c.case_id: c for c in light_cases()}
    case = by_id["onnx-models/light_densenet121"]
    (inputs,) = case.input_sets()
    np.testing.assert_array_equal(inputs[0], cases()["densenet121"].inputs()[0])
    (expected,) = case.expected_sets([inputs])
    np.testing.assert_array_equal(expected[0], cases()["densenet121"].expected_outputs()[0])
    assert (case.tolerance.rtol, case.tolerance.atol) == (2e-3, cases()["densenet121"].atol)
    assert case.set_tolerances(1) == [case.tolerance]


def test_missing_output_is_reported(tmp_path: Path) -> None:
    (tmp_path / "light").mkdir()
    shutil.copy(light_data_dir() / "light" / "light_squeezenet.onnx", tmp_path / "light")
    with pytest.raises(LightModelError, match="no expected output light_squeezenet_output_0.pb"):
        load_light_models(tmp_path)
    with pytest.raises(LightModelError, match="ships no light models"):
        load_light_models(tmp_path / "absent")
