"""common/stats.py: the figures, the calibrated sampling, the clock-resolution batching."""

from __future__ import annotations

import statistics
import time

import numpy as np
import pytest

from iree_conformance.common import stats


def test_summary_matches_numpy_and_statistics():
    rng = np.random.default_rng(0)
    samples = list(rng.lognormal(-9, 0.3, size=501))
    s = stats.summarize(samples)
    assert s.n == 501
    assert s.min_s == min(samples)
    assert s.mean_s == pytest.approx(np.mean(samples))
    assert s.std_s == pytest.approx(np.std(samples, ddof=1))
    assert s.median_s == pytest.approx(np.median(samples))
    assert s.p99_s == pytest.approx(np.percentile(samples, 99))
    assert s.ips == pytest.approx(1 / np.mean(samples))
    assert s.deviation == pytest.approx(statistics.stdev(samples) / statistics.fmean(samples))


def test_summary_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        stats.summarize([])


def test_one_sample_has_zero_deviation():
    s = stats.summarize([0.5])
    assert (s.std_s, s.median_s, s.p99_s) == (0.0, 0.5, 0.5)


def test_sampling_takes_the_minimum_count_and_time():
    calls = []
    taken = stats.sample(
        lambda: calls.append(time.sleep(0.001)),
        stats.Sampling(warmup_runs=2, warmup_s=0, min_runs=7, min_time_s=0.05, min_batch_s=1e-6),
    )
    assert taken.loops == 1  # a 1 ms call is far above the clock's floor
    assert len(taken.values_s) >= 7
    assert sum(taken.values_s) >= 0.04
    assert all(v >= 0.0009 for v in taken.values_s)
    assert len(calls) >= len(taken.values_s) + 2  # the warm-up is not sampled


def test_sampling_stops_at_max_runs():
    taken = stats.sample(
        lambda: None, stats.Sampling(min_runs=5, max_runs=5, min_time_s=0, max_time_s=10)
    )
    assert len(taken.values_s) == 5


def test_a_call_faster_than_the_clock_is_batched_in_loops():
    taken = stats.sample(lambda: None, stats.Sampling(min_runs=21, min_time_s=0, min_batch_s=1e-4))
    assert taken.loops > 1
    # each sample is ONE call's seconds: an empty call is far under a microsecond (the
    # fastest sample: a loaded machine may preempt some batches)
    assert taken.summary().min_s < 1e-6


def test_interleaved_sampling_keeps_the_ratio():
    taken = stats.sample_interleaved(
        {"slow": lambda: time.sleep(0.01), "fast": lambda: time.sleep(0.0005)},
        stats.Sampling(min_runs=10, min_time_s=0.0, min_batch_s=1e-6),
    )
    assert len(taken["slow"].values_s) == len(taken["fast"].values_s) >= 10
    assert taken["slow"].summary().median_s > taken["fast"].summary().median_s


def test_bad_sampling_is_refused():
    with pytest.raises(ValueError):
        stats.Sampling(min_runs=0)
    with pytest.raises(ValueError):
        stats.Sampling(min_time_s=2, max_time_s=1)


def test_benchee_table_orders_fastest_first_and_compares():
    rows = {
        "slow": stats.summarize([2e-3, 2e-3, 2e-3]),
        "fast": stats.summarize([1e-6, 1e-6, 1e-6]),
    }
    lines = stats.benchee_table(rows)
    assert lines[0].split() == ["Name", "ips", "average", "deviation", "median", "99th", "%"]
    assert lines[1].startswith("fast") and lines[2].startswith("slow")
    assert "1.00 M" in lines[1] and "2.00 ms" in lines[2]
    assert "2000.00x slower" in lines[-1]


@pytest.mark.parametrize(
    "seconds, text",
    [(3.77e-6, "3.77 μs"), (0.0431, "43.10 ms"), (2.5, "2.50 s"), (5e-9, "5.00 ns")],
)
def test_durations_are_formatted_as_benchee_does(seconds, text):
    assert stats.format_duration(seconds) == text


def test_a_warm_callable_skips_the_warm_up_and_keeps_its_calibration_call():
    calls = []
    taken = stats.sample_interleaved(
        {"model": lambda: calls.append(time.sleep(0.01))},
        stats.Sampling(warmup_runs=3, min_runs=1, max_runs=1, min_time_s=0, min_batch_s=1e-6),
        warm=frozenset({"model"}),
    )
    # the calibration call is the first (and, with max_runs=1, only) round; no warm-up
    assert len(calls) == 1 and len(taken["model"].values_s) == 1
