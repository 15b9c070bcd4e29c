import numpy as np
import pytest

from iree_conformance.model.compare import Tolerance, compare_outputs


def test_equal_floats_pass_and_metrics_are_zero():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    c = compare_outputs([a], [a.copy()])
    assert c.ok and c.metrics["max_abs_error"] == 0.0 and c.metrics["mismatch_count"] == 0
    assert c.metrics["outputs"] == [{"dtype": "float32", "shape": [3], "rule": "tolerance"}]


def test_float_outside_tolerance_fails_with_first_index():
    a = np.array([1.0, 2.0, 3.5], np.float32)
    e = np.array([1.0, 2.0, 3.0], np.float32)
    c = compare_outputs([a], [e])
    assert not c.ok
    assert c.metrics["mismatch_count"] == 1
    assert c.metrics["first_mismatch_index"] == [2]
    assert c.metrics["max_abs_error"] == pytest.approx(0.5)
    assert "first at [2]" in c.messages[0]


def test_per_case_tolerance_override():
    a, e = np.array([1.001], np.float32), np.array([1.0], np.float32)
    assert not compare_outputs([a], [e]).ok
    assert compare_outputs([a], [e], Tolerance(rtol=1e-2)).ok


def test_integers_must_be_exact():
    a, e = np.array([1, 2, 3], np.int32), np.array([1, 2, 4], np.int32)
    c = compare_outputs([a], [e], Tolerance(rtol=1.0, atol=10.0))
    assert not c.ok and c.metrics["mismatch_count"] == 1


def test_bools_exact():
    assert compare_outputs([np.array([True, False])], [np.array([True, False])]).ok
    assert not compare_outputs([np.array([True, True])], [np.array([True, False])]).ok


def test_nan_and_inf_positions_must_match():
    e = np.array([np.nan, np.inf, 1.0], np.float32)
    assert compare_outputs([e.copy()], [e]).ok
    assert not compare_outputs([np.array([0.0, np.inf, 1.0], np.float32)], [e]).ok
    assert not compare_outputs([np.array([np.nan, -np.inf, 1.0], np.float32)], [e]).ok
    assert not compare_outputs([np.array([np.nan, np.inf, np.nan], np.float32)], [e]).ok


def test_shape_and_count_and_dtype_mismatch():
    assert not compare_outputs([np.zeros((2, 3))], [np.zeros((3, 2))]).ok
    assert not compare_outputs([np.zeros(2)], [np.zeros(2), np.zeros(2)]).ok
    c = compare_outputs([np.zeros(2, np.float32)], [np.zeros(2, np.int32)])
    assert not c.ok and "dtype" in c.messages[0]


def test_default_tolerance_depends_on_dtype():
    a16, e16 = np.array([1.004], np.float16), np.array([1.0], np.float16)
    assert compare_outputs([a16], [e16]).ok  # f16 rtol 1e-2
    assert not compare_outputs([a16.astype(np.float32)], [e16.astype(np.float32)]).ok


def test_complex_compared_by_magnitude():
    e = np.array([1 + 1j], np.complex64)
    assert compare_outputs([e.copy()], [e]).ok
    assert not compare_outputs([np.array([1 + 1.1j], np.complex64)], [e]).ok


def test_integer_widths_and_signedness_must_match():
    assert not compare_outputs([np.array([1], np.int32)], [np.array([1], np.int64)]).ok
    assert not compare_outputs([np.array([2**64 - 1], np.uint64)], [np.array([-1], np.int64)]).ok
    assert not compare_outputs([np.array([1, 0], np.int8)], [np.array([True, False])]).ok
    assert not compare_outputs([np.array([1.0], np.float32)], [np.array([1.0], np.float64)]).ok


def test_ulp_mode_counts_units_in_the_last_place():
    e = np.array([1.0, -2.0, 0.0], np.float32)
    a = e.copy()
    a[1] = np.nextafter(a[1], np.float32(-3), dtype=np.float32)
    assert not compare_outputs([a], [e], Tolerance(max_ulp=0)).ok
    c = compare_outputs([a], [e], Tolerance(max_ulp=1))
    assert c.ok and c.metrics["max_ulp_error"] == 1.0
    assert compare_outputs(
        [np.array([-0.0], np.float32)], [np.array([0.0], np.float32)], Tolerance(max_ulp=0)
    ).ok
    far = np.array([1.001], np.float64)
    assert not compare_outputs([far], [np.array([1.0])], Tolerance(max_ulp=3)).ok


def test_float8_is_compared_as_floating_point():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    v = np.array([1.0, np.nan, -0.5], ml_dtypes.float8_e4m3fn)
    assert compare_outputs([v], [v.copy()]).ok


def test_tolerance_merge_keeps_unset_fields():
    merged = Tolerance(rtol=1e-2).merged_over(Tolerance(rtol=1e-3, atol=1e-4))
    assert merged == Tolerance(rtol=1e-2, atol=1e-4)


def test_messages_print_plain_numbers_not_numpy_reprs():
    result = compare_outputs(
        [np.array([np.nan, 1.0], np.float32)], [np.array([0.0898, 1.0], np.float32)]
    )
    assert "actual nan, expected 0.0898;" in result.messages[0], result.messages
    assert "np." not in result.messages[0]
    complex_result = compare_outputs(
        [np.array([1 + 2j], np.complex64)], [np.array([1 + 3j], np.complex64)]
    )
    assert "actual (1+2j), expected (1+3j);" in complex_result.messages[0]


def test_old_numpy_reprs_and_plain_numbers_group_together():
    from iree_conformance.common.diagnostics import normalize

    old = "output 0: 2 of 4 elements differ; first at [1]: actual np.float32(nan) expected np.float32(0.1); max abs error inf"
    new = "output 0: 3 of 4 elements differ; first at [0]: actual nan, expected 0.25; max abs error inf"
    assert normalize(old) == normalize(new)
    old_c = "actual np.complex64(0.5+1j) expected np.complex64(0.5+2j)"
    assert normalize(old_c) == normalize("actual (0.5+1j), expected (0.5+2j)")
