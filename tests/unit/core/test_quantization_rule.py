"""The quantization-grid rule (model.quantization) and the relative-error scope."""

import numpy as np
import pytest

from iree_conformance.model.compare import Tolerance, compare_outputs
from iree_conformance.model.quantization import DEFAULT_GRID_STEPS, Elementwise, QuantGrid

STEP = 0.05


def _sigmoid(x):
    return (1 / (1 + np.exp(-x))).astype(np.float32)


def test_dequantized_output_may_be_k_steps_off_but_not_more():
    e = (np.arange(-20, 20) * STEP).astype(np.float32)
    grid = Tolerance(rtol=1e-3, atol=1e-4, grids=(QuantGrid(STEP, source="DQ"),))
    two = (e + 2 * STEP).astype(np.float32)
    three = (e + 3 * STEP).astype(np.float32)
    assert compare_outputs([two], [e], grid).ok
    assert not compare_outputs([two], [e], Tolerance(rtol=1e-3, atol=1e-4)).ok  # strict
    bad = compare_outputs([three], [e], grid)
    assert not bad.ok and bad.metrics["mismatch_count"] == e.size
    assert "quantization grid: <= 2 steps of 0.05 (DQ)" in bad.messages[0]


def test_sigmoid_after_dequantize_bound_is_per_element():
    q = np.arange(-60, 61)
    x = q * STEP
    e = _sigmoid(x)
    tol = Tolerance(rtol=1e-3, atol=1e-4, grids=(QuantGrid(STEP, (Elementwise("Sigmoid"),)),))
    for k in (1, 2):  # k steps on either side, in the pre-sigmoid space
        assert compare_outputs([_sigmoid(x + k * STEP)], [e], tol).ok
        assert compare_outputs([_sigmoid(x - k * STEP)], [e], tol).ok
    # Three steps fail where the sigmoid is steep; a bound of slope*k*s (0.25*2*0.05)
    # everywhere would accept them at x=3 (3 steps move sigmoid by 0.0066 there).
    off = compare_outputs([_sigmoid(x + 3 * STEP)], [e], tol)
    assert not off.ok
    bound = QuantGrid(STEP, (Elementwise("Sigmoid"),)).bound(e, 2)
    assert bound[60] == pytest.approx(_sigmoid(np.array(2 * STEP)) - 0.5, rel=1e-5)
    assert bound[-1] < bound[60] / 5  # flat tail: a much smaller bound
    assert off.metrics["outputs"][0]["rule"] == "quantization-grid"


def test_relu_and_clip_flat_parts_use_the_edge():
    grid = QuantGrid(0.1, (Elementwise("Relu"), Elementwise("Clip", (0.0, 6.0))))
    e = np.array([0.0, 3.0, 6.0])
    b = grid.bound(e, 2)
    assert b == pytest.approx([0.2, 0.2, 0.2])  # the change is largest at the edge


def test_quantized_integer_output_may_be_k_steps_off():
    e = np.array([0, 128, 255], np.uint8)
    tol = Tolerance(grids=(QuantGrid(1.0, source="QuantizeLinear 'q'"),))
    assert compare_outputs([np.array([2, 126, 255], np.uint8)], [e], tol).ok
    assert not compare_outputs([np.array([3, 128, 255], np.uint8)], [e], tol).ok
    strict = compare_outputs([np.array([1, 128, 255], np.uint8)], [e])
    assert not strict.ok and strict.metrics["outputs"][0]["rule"] == "exact"


def test_uint8_returned_as_int8_with_the_same_bits_is_equal():
    e = np.array([131, 3], np.uint8)
    assert compare_outputs([e.view(np.int8)], [e]).ok  # -125 and 3


def test_only_outputs_with_a_grid_use_it_and_the_rule_is_recorded():
    e = np.zeros(4, np.float32)
    a = e + 2 * STEP
    c = compare_outputs([a, a], [e, e], Tolerance(grids=(QuantGrid(STEP), None)))
    assert not c.ok and len(c.messages) == 1 and c.messages[0].startswith("output 1:")
    rules = [o["rule"] for o in c.metrics["outputs"]]
    assert rules == ["quantization-grid", "tolerance"]


def test_manifest_override_keeps_the_case_grids():
    case = Tolerance(rtol=1e-3, grids=(QuantGrid(STEP),))
    merged = Tolerance(atol=1e-2).merged_over(case)
    assert merged.grids == case.grids and merged.atol == 1e-2 and merged.rtol == 1e-3
    assert merged.steps == DEFAULT_GRID_STEPS


def test_relative_error_only_over_elements_above_atol():
    e = np.array([0.0, 0.0, 1.0], np.float32)
    a = np.array([5e-5, -5e-5, 1.00001], np.float32)  # passes: within atol at the zeros
    c = compare_outputs([a], [e], Tolerance(rtol=1e-3, atol=1e-4))
    assert c.ok
    assert c.metrics["max_rel_error"] == pytest.approx(1e-5, rel=0.1)  # not 5e+300
    assert c.metrics["rel_error_scope"] == "elements with |expected| > atol (0.0001)"
    fail = compare_outputs([a + 1], [e], Tolerance(rtol=1e-3, atol=1e-4))
    assert "over elements with |expected| > atol (0.0001)" in fail.messages[0]


def test_unknown_elementwise_op_is_refused():
    with pytest.raises(ValueError, match="Softmax"):
        Elementwise("Softmax")


def test_tolerance_with_grids_survives_a_bundle_record():
    import dataclasses
    import json

    tol = Tolerance(rtol=1e-3, grids=(QuantGrid(STEP, (Elementwise("Clip", (0.0, 6.0)),)), None))
    back = Tolerance(**json.loads(json.dumps(dataclasses.asdict(tol))))
    assert back == tol and hash(back) == hash(tol)


def test_grid_steps_count_only_where_the_strict_tolerance_rejects():
    x = np.array([0.0, 20.0])  # the second saturates: its logit is not readable in float32
    e = _sigmoid(x)
    a = np.array([_sigmoid(np.array(STEP))[()], np.float32(0.9999999)], np.float32)
    tol = Tolerance(rtol=1e-3, atol=1e-4, grids=(QuantGrid(STEP, (Elementwise("Sigmoid"),)),))
    c = compare_outputs([a], [e], tol)
    assert c.ok and c.metrics["outputs"][0]["max_grid_steps"] == pytest.approx(1.0, abs=0.01)
