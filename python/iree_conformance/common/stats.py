"""Latency samples and their statistics: calibrated sampling, as pyperf and Benchee take them.

Standard library only (ci/ scripts and the report read these figures before anything is
installed). ``sample`` warms a callable up, batches calls that are faster than the clock
can tell apart into loops, and then takes samples until it has a minimum count *and* a
minimum time; ``sample_interleaved`` does the same for several callables, one sample of
each per round, so a machine that slows down mid-run slows all of them alike and their
ratio survives. Each sample is the seconds of ONE call (a batch's time over its loops).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence

CLOCK = time.perf_counter


@dataclasses.dataclass(frozen=True)
class Sampling:
    """How many samples to take: at least ``min_runs`` and ``min_time_s`` of sampling,
    at most ``max_runs`` or ``max_time_s`` (whichever comes first), after a warm-up."""

    warmup_runs: int = 1
    warmup_s: float = 0.05
    min_runs: int = 20
    min_time_s: float = 0.5
    max_runs: int = 100_000
    max_time_s: float = 10.0
    # A batch of calls must last at least this long, so that the clock's resolution and
    # the cost of reading it are small against it (pyperf's "calibrate loops").
    min_batch_s: float = 0.0

    def __post_init__(self) -> None:
        if self.min_runs < 1 or self.max_runs < self.min_runs:
            raise ValueError(f"sampling: need 1 <= min_runs <= max_runs, got {self}")
        if self.min_time_s < 0 or self.max_time_s < self.min_time_s:
            raise ValueError(f"sampling: need 0 <= min_time_s <= max_time_s, got {self}")

    def as_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


QUICK = Sampling(min_runs=10, min_time_s=0.2, max_time_s=5.0)


def clock_floor_s() -> float:
    """The shortest batch worth timing: 1000x the clock's resolution, and never under
    20 µs (reading perf_counter itself costs ~0.1 µs)."""
    resolution = time.get_clock_info("perf_counter").resolution
    return max(1000 * resolution, 20e-6)


@dataclasses.dataclass(frozen=True)
class Summary:
    """Benchee's and pyperf's figures over per-call samples (seconds)."""

    n: int
    min_s: float
    mean_s: float
    std_s: float
    median_s: float
    p99_s: float
    ips: float  # calls per second: 1 / mean

    @property
    def deviation(self) -> float:
        """The standard deviation as a fraction of the mean (Benchee's ±%)."""
        return self.std_s / self.mean_s if self.mean_s else 0.0

    def as_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(samples: Sequence[float]) -> Summary:
    if not samples:
        raise ValueError("no samples to summarize")
    mean = statistics.fmean(samples)
    return Summary(
        n=len(samples),
        min_s=min(samples),
        mean_s=mean,
        std_s=statistics.stdev(samples) if len(samples) > 1 else 0.0,
        median_s=statistics.median(samples),
        p99_s=percentile(samples, 99),
        ips=1.0 / mean if mean > 0 else math.inf,
    )


@dataclasses.dataclass
class Samples:
    """Per-call seconds of one callable, and the loops each sample was batched over."""

    values_s: list[float]
    loops: int = 1

    def summary(self) -> Summary:
        return summarize(self.values_s)


def _batch(fn: Callable[[], object], loops: int) -> float:
    t = CLOCK()
    for _ in range(loops):
        fn()
    return (CLOCK() - t) / loops


def calibrate_loops(fn: Callable[[], object], floor_s: float, limit: int = 1 << 20) -> int:
    """The number of calls per sample that lasts at least floor_s (1 for any call slower
    than the clock's floor; doubling, as pyperf does, for faster ones)."""
    return _calibrate(fn, floor_s, limit)[0]


def _calibrate(fn: Callable[[], object], floor_s: float, limit: int = 1 << 20) -> tuple[int, float]:
    """(loops, the per-call seconds of the last calibration batch)."""
    loops = 1
    while loops < limit:
        per_call = _batch(fn, loops)
        if per_call * loops >= floor_s:
            return loops, per_call
        loops *= 2
    return loops, per_call


def _warm_up(fn: Callable[[], object], sampling: Sampling) -> None:
    """At least warmup_runs calls and warmup_s seconds of them."""
    t = CLOCK()
    runs = 0
    while runs < sampling.warmup_runs or CLOCK() - t < sampling.warmup_s:
        fn()
        runs += 1


def sample_interleaved(
    fns: Mapping[str, Callable[[], object]],
    sampling: Sampling = Sampling(),
    warm: frozenset[str] = frozenset(),
) -> dict[str, Samples]:
    """Samples every callable, one sample of each per round (the order alternates each
    round, so neither always runs second), until each has min_runs and the rounds took
    min_time_s; stops at max_runs or before a round that would pass max_time_s, which
    counts the warm-up and calibration too (a bound on the whole cost; at least one round
    is taken). The callables named in
    ``warm`` have just run (the case's checked run): no warm-up. When no callable needs a
    loop, the calibration calls are the first round (a model's call of a second is paid
    once)."""
    floor = sampling.min_batch_s or clock_floor_s()
    names = list(fns)
    begun = CLOCK()
    for name in names:
        if name not in warm:
            _warm_up(fns[name], sampling)
    calibrated = {name: _calibrate(fns[name], floor) for name in names}
    loops = {name: calibrated[name][0] for name in names}
    taken: dict[str, Samples] = {name: Samples([], loops[name]) for name in names}
    start = CLOCK()
    rounds = 0
    if all(n == 1 for n in loops.values()):
        # Slow calls: the calibration calls (each after its warm-up) are the first round.
        for name in names:
            taken[name].values_s.append(calibrated[name][1])
        rounds = 1
    last_round_s = sum(calibrated[name][1] * loops[name] for name in names) if rounds else 0.0
    while not rounds or not _done(sampling, rounds, CLOCK() - start, CLOCK() - begun, last_round_s):
        order = names if rounds % 2 == 0 else names[::-1]
        round_start = CLOCK()
        for name in order:
            taken[name].values_s.append(_batch(fns[name], loops[name]))
        last_round_s = CLOCK() - round_start
        rounds += 1
    return taken


def _done(
    sampling: Sampling, rounds: int, sampled_s: float, total_s: float, round_s: float
) -> bool:
    """Enough samples, or no room for another round like the last one."""
    if rounds >= sampling.max_runs or total_s + round_s > sampling.max_time_s:
        return True
    return rounds >= sampling.min_runs and sampled_s >= sampling.min_time_s


def sample(fn: Callable[[], object], sampling: Sampling = Sampling()) -> Samples:
    """Calibrated samples of one callable (see ``sample_interleaved``)."""
    return sample_interleaved({"fn": fn}, sampling)["fn"]


def format_duration(seconds: float) -> str:
    """Benchee's unit choice: ns, μs, ms or s, two decimals."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("μs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.2f} {unit}"
    return f"{seconds / 1e-9:.2f} ns"


def format_ips(ips: float) -> str:
    """Benchee's ips: 265.49 K, 1.79 K, 0.0232 K."""
    if ips >= 1e6:
        return f"{ips / 1e6:.2f} M"
    if ips >= 100:
        return f"{ips / 1e3:.2f} K"
    return f"{ips / 1e3:.4f} K" if ips >= 1 else f"{ips:.4f}"


def benchee_table(rows: Mapping[str, Summary]) -> list[str]:
    """Benchee's console table, fastest first, and its "Comparison" block."""
    ordered = sorted(rows.items(), key=lambda kv: kv[1].mean_s)
    width = max([len(name) for name in rows] + [4]) + 2
    lines = [
        f"{'Name':<{width}}{'ips':>12}{'average':>15}{'deviation':>12}{'median':>15}{'99th %':>15}"
    ]
    for name, s in ordered:
        lines.append(
            f"{name:<{width}}{format_ips(s.ips):>12}{format_duration(s.mean_s):>15}"
            f"{'±' + format(s.deviation * 100, '.2f') + '%':>12}"
            f"{format_duration(s.median_s):>15}{format_duration(s.p99_s):>15}"
        )
    if len(ordered) > 1:
        best_name, best = ordered[0]
        lines += ["", "Comparison: ", f"{best_name:<{width}}{format_ips(best.ips):>12}"]
        for name, s in ordered[1:]:
            lines.append(
                f"{name:<{width}}{format_ips(s.ips):>12} - {s.mean_s / best.mean_s:.2f}x slower "
                f"+{format_duration(s.mean_s - best.mean_s)}"
            )
    return lines
