"""Speed and memory figures of a results file, and the comparison of two files.

An outcome's figures are ``metrics["benchmark"]`` (written by engine/benchmark.py)::

    {"iree": {"samples_s": [...], "loops": 1, "summary": {...}},
              # "from_checked_run": true: the one sample is the checked run (the budget)
     "reference": {"name": "onnxruntime", "settings": {...}, "samples_s": [...], ...},
                   # "interleaved": false: sampled alone; "first_setup": its cost unknown before
     "reference_missing": "why there is no reference timing",   # instead of "reference"
     "ratio": IREE median / reference median,
     "compile": {"cpu_s": ..., "module_bytes": ...}, "load_s": ...,
     "memory": {"rss_growth_bytes": ..., "rss_growth_how": "VmHWM over ... minus VmRSS just before",
                "allocated_bytes": {"device": ..., "host": ...}, "allocated_how": "...",
                "calls": ...,
                "run_peak_rss_bytes": ..., "device": {...}},  # the last two: history, not compared
     "sampling": {...},
     "confirm_runs": [{"iree": {"samples_s": ...}, "reference": {...}}, ...]}  # optional

A case that was asked for figures but failed has ``info["benchmark"]``: why it has none.

The comparison (``compare_results``) judges a speed change on the raw samples with a
two-sided Mann-Whitney U test (no assumption of normal latencies; robust to the long
right tail of a loaded machine) *and* a minimum effect size on the medians (10 %). When
both sides timed the case's reference interleaved with IREE (one sample of each per
round), the test runs on the per-round ratios IREE/reference instead of IREE's seconds.
One run cannot show the noise between runs (a loaded 2-core machine moves a whole run of
the same build by 2x), so a change must also leave the spread of both sides' runs, show in
every new run and, with few runs, pass the shift every case of the run shared: a run is a
results file or a case's ``confirm_runs`` inside one (pyperf's values from several
processes; benchmarks/speed_compare_aa.py measures the false-alarm rate). ``alpha`` is the
whole comparison's chance of listing an unchanged case (docs/compare.md). Memory and module
size are one figure per run (``MEASURES``): they are reported when their median changes by
at least min_effect and a floor (4 MiB of resident growth, 1 KiB of IREE's allocations for
one run or of module), and only between figures that measured the same thing (their
``*_how`` equal): the worker's high-water mark, which holds the compile and earlier cases,
is never compared. ``Comparison.regressions`` is every change for the worse, of any kind,
which ``compare``'s exit status reports.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from iree_conformance.common.markdown_escape import md_code, md_text, plain_text
from iree_conformance.common.stats import Summary, format_duration, summarize
from iree_conformance.report.tables import capped_lines

Key = tuple[str, str]  # (target, case_id)

ALPHA = 0.01
MIN_EFFECT = 0.10
#: The resident growth of a tiny case moves between 0.1 and 1.6 MiB from one worker to the
#: next (the interpreter's and the reference's allocators: the bundled StableHLO corpus,
#: 2026-12-04), whatever IREE does; IREE's own allocations are judged to the KiB.
MEMORY_FLOOR_BYTES = 4 << 20
SIZE_FLOOR_BYTES = 1 << 10


def figures(outcome: Mapping[str, Any]) -> dict[str, Any] | None:
    """The outcome's benchmark figures, or None when it has no IREE samples."""
    bench = (outcome.get("metrics") or {}).get("benchmark")
    if not isinstance(bench, dict):
        return None
    iree = bench.get("iree")
    if not isinstance(iree, dict) or not iree.get("samples_s"):
        return None
    return bench


def runs_of(bench: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The figures' timing runs: the case's own, then its ``confirm_runs`` (the same case
    timed again later in the job, each with IREE's samples and the reference's)."""
    confirm = bench.get("confirm_runs")
    more = [
        r
        for r in (confirm if isinstance(confirm, list) else [])
        if isinstance(r, dict) and isinstance(r.get("iree"), dict) and r["iree"].get("samples_s")
    ]
    return [bench, *more]


def iree_samples(bench: Mapping[str, Any]) -> list[float]:
    return [float(x) for x in bench["iree"]["samples_s"]]


def reference_samples(bench: Mapping[str, Any]) -> list[float] | None:
    ref = bench.get("reference")
    if isinstance(ref, dict) and ref.get("samples_s"):
        return [float(x) for x in ref["samples_s"]]
    return None


def ratio_samples(bench: Mapping[str, Any]) -> list[float] | None:
    """IREE's seconds over the reference's, round by round, when they were interleaved
    (the same number of samples, taken in alternation); else None."""
    ref = bench.get("reference")
    if not isinstance(ref, dict) or not ref.get("interleaved"):
        return None
    iree, other = iree_samples(bench), reference_samples(bench)
    if not other or len(other) != len(iree) or min(other) <= 0:
        return None
    return [a / b for a, b in zip(iree, other)]


def reference_name(bench: Mapping[str, Any]) -> str:
    ref = bench.get("reference")
    return str(ref.get("name", "reference")) if isinstance(ref, dict) else "reference"


def iree_summary(bench: Mapping[str, Any]) -> Summary:
    return summarize(iree_samples(bench))


def not_timed_reason(outcome: Mapping[str, Any]) -> str | None:
    reason = (outcome.get("info") or {}).get("benchmark")
    return reason if isinstance(reason, str) else None


def p_value(base: list[float], new: list[float]) -> float:
    """Two-sided Mann-Whitney U p-value, normal approximation with tie and continuity
    corrections (scipy's ``method="asymptotic"``; standard library only, so that the CI's
    results job, which installs nothing, can judge); 1.0 with under 3 samples a side."""
    import math
    from collections import Counter
    from statistics import NormalDist

    n1, n2 = len(base), len(new)
    if n1 < 3 or n2 < 3:
        return 1.0
    ranked = sorted([(v, 0) for v in base] + [(v, 1) for v in new])
    ranks: list[float] = [0.0] * len(ranked)
    i = 0
    while i < len(ranked):  # average ranks over ties
        j = i
        while j + 1 < len(ranked) and ranked[j + 1][0] == ranked[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    r1 = sum(r for r, (_, side) in zip(ranks, ranked) if side == 0)
    u1 = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    ties = sum(t**3 - t for t in Counter(v for v, _ in ranked).values())
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:
        return 1.0
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return min(1.0, 2 * (1 - NormalDist().cdf(max(z, 0.0))))


def t_quantile(p: float, df: float) -> float:
    """Student's t quantile by the Cornish-Fisher expansion (Abramowitz and Stegun 26.7.5;
    within 0.5 % of the exact value for df >= 5, which the moderated spread guarantees)."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(p)
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * df**4)
    )


@dataclasses.dataclass(frozen=True)
class Change:
    key: Key
    kind: str  # time | memory | module size
    base: float
    new: float
    p: float | None  # None for one-figure measures (memory, size)
    basis: str = ""  # time: "" (IREE seconds) or the reference's name (IREE/reference ratio)

    @property
    def relative(self) -> float:
        return self.new / self.base - 1.0

    @property
    def worse(self) -> bool:
        return self.new > self.base

    def describe(self) -> str:
        if self.kind == "time":
            word = "slower" if self.worse else "faster"
        else:
            measure = MEASURE_BY_KIND[self.kind]
            word = measure.worse if self.worse else measure.better
        pct = abs(self.relative) * 100
        if self.kind == "time":
            if self.basis:
                figures_ = f"IREE/{self.basis} median {self.base:.3g}x -> {self.new:.3g}x"
            else:
                figures_ = f"median {format_duration(self.base)} -> {format_duration(self.new)}"
            p = f"p < {ALPHA:g}" if self.p is not None and self.p < ALPHA else f"p = {self.p:.3g}"
            return f"{word} by {pct:.1f} % ({p}; {figures_})"
        return f"{word} by {pct:.1f} % ({_bytes(self.base)} -> {_bytes(self.new)})"


def _bytes(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def _path(bench: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = bench
    for name in path:
        value = value.get(name) if isinstance(value, Mapping) else None
    return value


@dataclasses.dataclass(frozen=True)
class Measure:
    """A one-figure measure of a run (``metrics.benchmark``) that the comparison judges:
    where its figure is, where what it measured is said (figures are compared only when
    that is the same on every run; None: nothing to match), its floor and its words.
    A new kind of figure (a dispatch count) is one more entry of MEASURES: it is then
    listed and counted among the regressions (``compare`` exits 1 on it)."""

    kind: str
    figure: tuple[str, ...]
    how: tuple[str, ...] | None
    floor: float
    worse: str
    better: str
    value: Callable[[Mapping[str, Any]], Any] | None = None  # instead of the figure's path

    def of(self, bench: Mapping[str, Any]) -> tuple[float | None, str | None]:
        """(the run's figure, what it measured); (None, None) when the run has none."""
        raw = self.value(bench) if self.value is not None else _path(bench, self.figure)
        if not isinstance(raw, (int, float)) or isinstance(raw, bool):
            return None, None
        how = _path(bench, self.how) if self.how is not None else ""
        return float(raw), str(how) if how is not None else None


MEASURES: list[Measure] = [
    Measure(
        "memory",
        ("memory", "rss_growth_bytes"),
        ("memory", "rss_growth_how"),
        MEMORY_FLOOR_BYTES,
        "more memory",
        "less memory",
    ),
    Measure(
        "device memory",
        ("memory", "allocated_bytes", "device"),
        ("memory", "allocated_how"),
        SIZE_FLOOR_BYTES,
        "more device memory",
        "less device memory",
    ),
    Measure(
        "host memory",
        ("memory", "allocated_bytes", "host"),
        ("memory", "allocated_how"),
        SIZE_FLOOR_BYTES,
        "more host memory",
        "less host memory",
    ),
    Measure(
        "module size",
        ("compile", "module_bytes"),
        None,
        SIZE_FLOOR_BYTES,
        "larger module",
        "smaller module",
    ),
]
MEASURE_BY_KIND = {m.kind: m for m in MEASURES}
#: What an older results file has instead of a comparable memory figure: shown, never judged.
OLD_MEMORY_FIGURE = ("memory", "run_peak_rss_bytes")


@dataclasses.dataclass
class Comparison:
    verdicts: list[tuple[Key, str, str]] = dataclasses.field(default_factory=list)
    changes: list[Change] = dataclasses.field(default_factory=list)
    unchanged: int = 0  # timed on both sides, no significant change
    no_data: list[tuple[Key, str]] = dataclasses.field(default_factory=list)
    # Passed on both sides, timed on neither (the default times only the models): counted,
    # not listed, so that two untimed runs read as quiet.
    untimed: int = 0
    only_one_side: int = 0
    base_runs: int = 1
    new_runs: int = 1
    alpha: float = ALPHA  # the chance that an unchanged build lists any case's time
    case_alpha: float = ALPHA  # each case's time test: alpha over the cases judged

    @property
    def slowdowns(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "time" and c.worse]

    @property
    def regressions(self) -> list[Change]:
        """Every change for the worse, whatever its kind (time, memory, module size and
        any later entry of MEASURES): what ``compare``'s exit status reports."""
        return [c for c in self.changes if c.worse]

    @property
    def timed(self) -> int:
        return self.unchanged + len({c.key for c in self.changes if c.kind == "time"})


def _index(outcomes: Iterable[Mapping[str, Any]]) -> dict[Key, Mapping[str, Any]]:
    return {(str(o["target"]), str(o["case_id"])): o for o in outcomes}


def _median(values: list[float]) -> float:
    import statistics

    return statistics.median(values)


PRIOR_DF = 4  # how many runs' worth of weight the pooled spread gets (limma's d0)


def log_spread(medians: list[float]) -> float | None:
    """The standard deviation of the runs' log medians (None for one run)."""
    import math
    import statistics

    return statistics.stdev([math.log(m) for m in medians]) if len(medians) > 1 else None


def beyond_baseline(
    base_medians: list[float],
    new_median: float,
    alpha: float,
    min_effect: float,
    prior_sd: float | None = None,
    prior_df: int = PRIOR_DF,
    new_medians: Sequence[float] = (),
) -> int:
    """+1 (above) or -1 (below) when a new run's median lies outside the baseline runs'
    (1 - alpha) prediction interval, in logs, and at least min_effect from their median;
    else 0. The runs' own spread is the noise a single run cannot show (a loaded machine
    moves a whole run by 2x): it is pooled over both sides, the baseline's runs and
    ``new_medians`` (the new side's runs), so that the judgement is the same whichever
    side is the baseline (a case whose new runs disagree by 4x is noise, not a change).
    So few runs estimate a spread poorly, so it is moderated towards prior_sd, a quiet
    case's spread (empirical Bayes, as limma does). With one run a side there is no
    spread to measure: min_effect alone (the report says so)."""
    import math
    import statistics

    logs = [math.log(m) for m in base_medians]
    offset = math.log(new_median) - statistics.median(logs)
    if abs(math.exp(offset) - 1.0) < min_effect:
        return 0
    others = [math.log(m) for m in new_medians]
    df = (len(logs) - 1) + max(0, len(others) - 1)
    if df >= 1:
        k = len(logs)
        squares = sum((x - statistics.fmean(side)) ** 2 for side in (logs, others) if side
                      for x in side)  # fmt: skip
        var = squares / df
        if prior_sd is not None:
            var = (df * var + prior_df * prior_sd**2) / (df + prior_df)
            df += prior_df
        half_width = t_quantile(1 - alpha / 2, df) * math.sqrt(var) * math.sqrt(1 + 1 / k)
        if abs(math.log(new_median) - statistics.fmean(logs)) <= half_width:
            return 0
    return 1 if offset > 0 else -1


def compare_time(
    key: Key,
    base_runs: list[list[float]],
    new_runs: list[list[float]],
    alpha: float,
    min_effect: float,
    basis: str = "",
    prior_sd: float | None = None,
    spread_alpha: float | None = None,
) -> tuple[Change, bool]:
    """The change of the medians (each side's runs pooled), and whether it is significant:
    within the runs (Mann-Whitney U on the pooled samples, at alpha), at least min_effect,
    every new run beyond the baseline runs' spread on the same side and every baseline run
    beyond the new runs' the other way (at ``spread_alpha``, default alpha). Several new
    runs are the confirmation pyperf gets from several processes: a run that a busy moment
    moved does not repeat, a real change does."""
    pooled = [x for run in base_runs for x in run]
    pooled_new = [x for run in new_runs for x in run]
    change = Change(
        key, "time", _median(pooled), _median(pooled_new), p_value(pooled, pooled_new), basis
    )
    assert change.p is not None
    base_medians = [_median(run) for run in base_runs]
    new_medians = [_median(run) for run in new_runs]
    level = alpha if spread_alpha is None else spread_alpha
    # Every new run beyond the baseline runs' interval, and every baseline run beyond the
    # new runs' the other way: the verdict is the same whichever side is the baseline.
    sides = {
        beyond_baseline(base_medians, m, level, min_effect, prior_sd, new_medians=new_medians)
        for m in new_medians
    } | {
        -beyond_baseline(new_medians, m, level, min_effect, prior_sd, new_medians=base_medians)
        for m in base_medians
    }
    significant = (
        change.p < alpha
        and abs(change.relative) >= min_effect
        and len(sides) == 1
        and 0 not in sides
    )
    return change, significant


def _one_figure(
    key: Key, kind: str, base: Any, new: Any, min_effect: float, floor: float
) -> Change | None:
    if not isinstance(base, (int, float)) or not isinstance(new, (int, float)) or base <= 0:
        return None
    change = Change(key, kind, float(base), float(new), None)
    if abs(change.relative) >= min_effect and abs(new - base) >= floor:
        return change
    return None


def _time_samples(
    base_figures: Sequence[Mapping[str, Any]], new_figures: Sequence[Mapping[str, Any]]
) -> tuple[list[list[float]], list[list[float]], str]:
    """The samples to test, run by run: the interleaved IREE/reference ratios when every
    run has them against the same reference, else IREE's seconds."""
    every = [*base_figures, *new_figures]
    ratios = [ratio_samples(f) for f in every]
    names = {reference_name(f) for f in every}
    k = len(base_figures)
    if all(ratios) and len(names) == 1:
        runs = [r for r in ratios if r]
        return runs[:k], runs[k:], names.pop()
    return [iree_samples(f) for f in base_figures], [iree_samples(f) for f in new_figures], ""


def _typical_spread(
    *sides: tuple[Mapping[Key, Mapping[str, Any]], list[dict[Key, Mapping[str, Any]]]],
) -> float | None:
    """The lower quartile, over the cases and the ``sides`` ((first run, further runs) of
    the baseline, then of the new side) timed more than once on a side, of the spread of
    their runs' log medians (None when no side has two runs): what a quiet case's runs
    vary by, a floor under a spread that so few runs happened to underestimate. (The
    median would let the noisy cases, IREE's threads on a loaded machine, blind the quiet
    ones.)"""
    import statistics

    spreads = []
    for first_run, extra in sides:
        for key, outcome in first_run.items():
            first = figures(outcome)
            others = [figures(run[key]) for run in extra if key in run]
            if first is None or any(f is None for f in others):
                continue
            every = [r for f in (first, *others) if f for r in runs_of(f)]
            if len(every) < 2:
                continue
            runs, _, _ = _time_samples(every, [])
            spread = log_spread([_median(r) for r in runs])
            if spread is not None:
                spreads.append(spread)
    if len(spreads) >= 4:
        return statistics.quantiles(spreads, n=4)[0]
    return statistics.median(spreads) if spreads else None


#: The fewest cases timed on both sides whose shifts give the runs' noise (below: none).
MIN_SHIFT_CASES = 4
#: Under this many runs on a side, a time change must also pass the run's own shift: so few
#: runs cannot show the noise between a run and the next (docs/speed.md: 1 + 1 flags about
#: half the cases of an A/A pair, 2 + 2 one in twenty, 3 + 3 none measured).
FEW_RUNS = 3


def _run_shift_scale(
    base: Mapping[Key, Mapping[str, Any]],
    new: Mapping[Key, Mapping[str, Any]],
    extra: list[dict[Key, Mapping[str, Any]]],
    extra_new: list[dict[Key, Mapping[str, Any]]],
) -> dict[str, float]:
    """The noise between the two sides as a whole, from how far every case timed on both
    moved: 1.4826 times the median absolute log shift of the medians (a robust standard
    deviation around no change), over at least MIN_SHIFT_CASES cases. A loaded machine
    moves a whole run, and a load that changes between the baseline's runs and the new
    ones moves every new run alike (docs/speed.md), which the runs' own samples and
    spread cannot show; with few runs, a case is a change only when it moved far more
    than the cases do.

    Keyed by what was tested (``"ratio"``: IREE/reference, ``"ratio:NAME"``: IREE/that
    reference, ``"seconds"``: IREE alone), each from its own cases when it has enough,
    and ``"all"`` from every case: IREE's seconds move with the load far more than a
    ratio does (its thread pool waits for the cores; a single-threaded reference beside
    it barely moves), so the ratios' quiet must not judge the seconds; and a reference
    with threads of its own (onnxruntime) moves its ratios with the load unlike XLA's
    (a loaded A/A pair, 2026-12-04: light_squeezenet's IREE/onnxruntime went from 21x to
    45-51x, each side's two timings agreeing, while the StableHLO cases' ratios stayed)."""
    import math

    shifts: dict[str, list[float]] = {"ratio": [], "seconds": []}
    by_reference: dict[str, list[float]] = {}
    for key in base.keys() & new.keys():
        fb, fn = figures(base[key]), figures(new[key])
        if fb is None or fn is None:
            continue
        base_figures = [r for f in (fb, *_figures_of(extra, key)) for r in runs_of(f)]
        new_figures = [r for f in (fn, *_figures_of(extra_new, key)) for r in runs_of(f)]
        base_runs, new_runs, basis = _time_samples(base_figures, new_figures)
        b = _median([x for run in base_runs for x in run])
        n = _median([x for run in new_runs for x in run])
        if b > 0 and n > 0:
            shifts["ratio" if basis else "seconds"].append(abs(math.log(n / b)))
            if basis:
                by_reference.setdefault(f"ratio:{basis}", []).append(abs(math.log(n / b)))
    shifts["all"] = shifts["ratio"] + shifts["seconds"]
    shifts.update(by_reference)
    return {
        kind: 1.4826 * _median(values)
        for kind, values in shifts.items()
        if len(values) >= MIN_SHIFT_CASES
    }


def beyond_run_shift(change: Change, scale: float, alpha: float) -> bool:
    """Whether a case timed few times a side moved beyond the runs' noise (``_run_shift_scale``):
    its log shift past the two-sided 1 - alpha normal quantile of that scale."""
    import math
    from statistics import NormalDist

    return abs(math.log(change.new / change.base)) > NormalDist().inv_cdf(1 - alpha / 2) * scale


def compare_results(
    base_outcomes: Iterable[Mapping[str, Any]],
    new_outcomes: Iterable[Mapping[str, Any]],
    alpha: float = ALPHA,
    min_effect: float = MIN_EFFECT,
    more_base: Sequence[Iterable[Mapping[str, Any]]] = (),
    more_new: Sequence[Iterable[Mapping[str, Any]]] = (),
    only: Collection[Key] | None = None,
) -> Comparison:
    """Compares NEW with BASE: the further baseline runs of more_base give the noise
    between runs, the further new runs of more_new confirm a change (pyperf's values from
    several processes). Verdicts are compared on the first run of each side. ``only``:
    judge these cases alone (the typical spread still comes from every case)."""
    base, new = _index(base_outcomes), _index(new_outcomes)
    extra = [_index(run) for run in more_base]
    extra_new = [_index(run) for run in more_new]
    result = Comparison(base_runs=1 + len(extra), new_runs=1 + len(extra_new))
    result.only_one_side = len(base.keys() ^ new.keys())
    prior_sd = _typical_spread((base, extra), (new, extra_new))
    shift_scale = _run_shift_scale(base, new, extra, extra_new)
    judged = [
        key
        for key in base.keys() & new.keys()
        if (only is None or key in only) and figures(base[key]) and figures(new[key])
    ]
    # alpha is the chance that an unchanged build lists any case's time (family-wise,
    # Bonferroni): tested at alpha each, the 92 timed cases of a corpus would list about
    # one by chance on every comparison (docs/compare.md).
    result.alpha, result.case_alpha = alpha, alpha / max(1, len(judged))
    case_alpha = result.case_alpha
    for key in sorted(base.keys() & new.keys()):
        if only is not None and key not in only:
            continue
        b, n = base[key], new[key]
        if b.get("status") != n.get("status"):
            result.verdicts.append((key, str(b.get("status")), str(n.get("status"))))
        fb, fn = figures(b), figures(n)
        if fb is None or fn is None:
            if fb is None and fn is None and b.get("status") == n.get("status") == "pass":
                result.untimed += 1
            elif fb is not None or fn is not None:
                side = "base" if fb is None else "new"
                why = not_timed_reason(b if fb is None else n) or "no figures"
                result.no_data.append((key, f"{side}: {why}"))
            continue
        base_figures = [r for f in (fb, *_figures_of(extra, key)) for r in runs_of(f)]
        new_figures = [r for f in (fn, *_figures_of(extra_new, key)) for r in runs_of(f)]
        result.base_runs = max(result.base_runs, len(base_figures))
        result.new_runs = max(result.new_runs, len(new_figures))
        functions = sorted({str(r["iree"]["function"]) for r in (*base_figures, *new_figures)
                            if r["iree"].get("function")})  # fmt: skip
        if len(functions) > 1:  # a JAX case's main beside XLA, its check_xla without it
            result.no_data.append(
                (key, f"time: IREE timed different functions ({', '.join(functions)}); "
                 "give runs made with the same --timing-budget")
            )  # fmt: skip
        else:
            base_runs, new_runs, basis = _time_samples(base_figures, new_figures)
            few = min(len(base_runs), len(new_runs)) < FEW_RUNS
            kind = "ratio" if basis else "seconds"
            scale = shift_scale.get(f"ratio:{basis}", shift_scale.get(kind, shift_scale.get("all")))
            # One gate at the comparison's level bounds its chance of a false listing: the
            # run's shift (rule 5) where it applies, else the spread between runs (rule 3),
            # which then keeps the power of a per-case test (docs/compare.md).
            shift_gates = few and scale is not None
            change, significant = compare_time(
                key, base_runs, new_runs, case_alpha, min_effect, basis, prior_sd,
                spread_alpha=alpha if shift_gates else case_alpha,
            )  # fmt: skip
            if significant and scale is not None and shift_gates:
                significant = beyond_run_shift(change, scale, case_alpha)
            if significant:
                result.changes.append(change)
            else:
                result.unchanged += 1
        for measure in MEASURES:
            (base_value, base_how), (new_value, new_how) = (
                _median_figure(base_figures, measure),
                _median_figure(new_figures, measure),
            )
            if base_value is None or new_value is None:
                old = (
                    _old_memory_only(base_figures, new_figures)
                    if measure.kind == "memory"
                    else None
                )
                if old:
                    result.no_data.append((key, old))
                continue
            if base_how != new_how:
                result.no_data.append(
                    (key, f"{measure.kind}: measured differently, not compared "
                     f"(base: {base_how or 'unsaid'}; new: {new_how or 'unsaid'})")
                )  # fmt: skip
                continue
            one = _one_figure(key, measure.kind, base_value, new_value, min_effect, measure.floor)
            if one is not None:
                result.changes.append(one)
    return result


def _old_memory_only(
    base_runs: Sequence[Mapping[str, Any]], new_runs: Sequence[Mapping[str, Any]]
) -> str | None:
    """Why memory is not compared when a side is an older results file, whose only memory
    figure is the worker's high-water mark (the compile's and earlier cases' memory
    included), and the other side has the comparable figure; else None."""
    growth = MEASURE_BY_KIND["memory"]
    sides = []
    for name, runs in (("base", base_runs), ("new", new_runs)):
        has_new = any(growth.of(r)[0] is not None for r in runs)
        has_old_only = any(
            isinstance(_path(r, OLD_MEMORY_FIGURE), (int, float))
            and _path(r, growth.how or ()) is None
            for r in runs
        )
        sides.append((name, has_new, has_old_only))
    (b, b_new, b_old), (n, n_new, n_old) = sides
    if (b_old and n_new) or (n_old and b_new):
        old_side = b if b_old else n
        return (
            f"memory: the {old_side} file carries only the worker's high-water mark (an older "
            "results file; it holds the compile and earlier cases), not compared"
        )
    return None


def _figures_of(runs: list[dict[Key, Mapping[str, Any]]], key: Key) -> list[dict[str, Any]]:
    return [f for f in (figures(run[key]) for run in runs if key in run) if f]


def _median_figure(
    runs: Sequence[Mapping[str, Any]], measure: Measure
) -> tuple[float | None, str | None]:
    """The median over runs of a one-figure measure (memory, module size) and what it
    measured; (None, None) without a figure, and (None, why) when the runs' figures
    measured different things (they are not pooled)."""
    found = [measure.of(run) for run in runs]
    numbers = [(v, how) for v, how in found if v is not None]
    if not numbers:
        return None, None
    hows = {how for _, how in numbers}
    if len(hows) > 1:
        return None, "; ".join(sorted(h or "unsaid" for h in hows))
    return _median([v for v, _ in numbers]), hows.pop()


def comparison_lines(c: Comparison, markdown: bool = False) -> list[str]:
    """The comparison as text: verdict changes, significant changes, what had no data."""
    bullet = "- " if markdown else "  "
    lines: list[str] = []
    if c.verdicts:
        lines.append(f"Verdict changes ({len(c.verdicts)}):")
        lines += [
            f"{bullet}{md_code(k[1])} on {md_text(k[0])}: {md_text(a)} -> {md_text(b)}"
            if markdown
            else f"{bullet}{plain_text(k[1])} on {plain_text(k[0])}: {plain_text(a)} -> {plain_text(b)}"
            for k, a, b in c.verdicts
        ]
    worse = [x for x in c.changes if x.worse]
    better = [x for x in c.changes if not x.worse]
    for title, items in (("Significantly worse", worse), ("Significantly better", better)):
        if items:
            lines.append(f"{title} ({len(items)}):")
            lines += [
                (
                    f"{bullet}{md_code(x.key[1])} on {md_text(x.key[0])}: {x.describe()}"
                    if markdown
                    else f"{bullet}{plain_text(x.key[1])} on {plain_text(x.key[0])}: {x.describe()}"
                )
                for x in items
            ]
    lines.append(
        f"{c.timed} case(s) timed on both sides; {c.unchanged} without a significant speed "
        f"change (p >= {c.case_alpha:.2g}, that is {c.alpha:g} over the cases judged, or "
        f"under {MIN_EFFECT:.0%})."
    )
    if c.no_data:
        lines.append(f"No data ({len(c.no_data)}: not compared, not counted as zero):")

        def no_data_line(item: tuple[Key, str]) -> str:
            (where, case_id), why = item
            if markdown:
                return f"{bullet}{md_code(case_id)} on {md_text(where)}: {md_text(why)}"
            return f"{bullet}{plain_text(case_id)} on {plain_text(where)}: {plain_text(why)}"

        lines += capped_lines(c.no_data, 50, no_data_line, lambda n: f"{bullet}... and {n} more")
    if c.untimed:
        lines.append(
            f"{c.untimed} case(s) passed on both sides and were timed on neither (not "
            "compared; `--benchmark` times every case)."
        )
    if c.only_one_side:
        lines.append(f"{c.only_one_side} case(s) present on one side only.")
    if c.timed:
        lines.append(
            _runs_note(
                c.base_runs, _ONE_BASE_RUN, "baseline runs: a change must also leave their spread."
            )
        )
        lines.append(
            _runs_note(c.new_runs, _ONE_NEW_RUN, "new runs: a change must be seen in each of them.")
        )
    return lines


_ONE_BASE_RUN = (
    "One baseline run: the noise between runs is not measured, and on a loaded machine a "
    "whole run can move by more than 10 %; give several baseline files (docs/speed.md)."
)
_ONE_NEW_RUN = (
    "One new run: a busy moment during it can pass for a change; time it twice more and "
    "give all three (--new-runs 3; docs/speed.md)."
)


def _runs_note(runs: int, one: str, several: str) -> str:
    """What the number of runs on one side means for the comparison."""
    return one if runs == 1 else f"{runs} {several}"


def regression_line(c: Comparison) -> str | None:
    """What ``compare``'s exit status 1 stands for: each kind of regression and its cases
    (None when there is none)."""
    kinds: dict[str, list[str]] = {}
    for change in c.regressions:
        kinds.setdefault(change.kind, []).append(f"{change.key[1]} on {change.key[0]}")
    if not kinds:
        return None
    parts = [f"{kind}: {', '.join(cases)}" for kind, cases in kinds.items()]
    return f"Regressions ({len(c.regressions)}; exit status 1): " + "; ".join(parts)


def format_bytes(n: float | None) -> str:
    return "-" if n is None else _bytes(n)


def benchmark_lines(bench: Mapping[str, Any]) -> list[str]:
    """A case's figures as check-model prints them: Benchee's table of IREE and its
    reference, then compile, load and memory."""
    from iree_conformance.common.stats import benchee_table

    rows = {"iree": summarize(iree_samples(bench))}
    ref = reference_samples(bench)
    if ref:
        rows[reference_name(bench)] = summarize(ref)
    lines = benchee_table(rows)
    sampling = bench.get("sampling") or {}
    interleaved = bool((bench.get("reference") or {}).get("interleaved"))
    if bench["iree"].get("from_checked_run"):
        lines.append(
            "(IREE: 1 sample, its checked run, inputs uploaded with it: no further call fitted "
            "the timing budget"
            + (f"; {reference_name(bench)} sampled alone" if ref else "")
            + "; --timing-budget full samples it)"
        )
    else:
        lines.append(
            f"({rows['iree'].n} samples of {bench['iree'].get('loops', 1)} call(s) each"
            + (", interleaved with the reference" if ref and interleaved else "")
            + (
                f"; sampling {sampling.get('min_runs')} runs / {sampling.get('min_time_s', 0):.3g} s minimum"
                if sampling
                else ""
            )
            + "; inputs already on the device)"
        )
    if ref:
        lines.append(f"ratio IREE/{reference_name(bench)} (medians): {bench.get('ratio', 0):.2f}x")
        if (bench.get("reference") or {}).get("first_setup"):
            lines.append(
                f"{reference_name(bench)} was set up for the first time on this machine: its "
                "cost was not known in advance and counts in full (later runs know it)"
            )
        settings = (bench.get("reference") or {}).get("settings")
        if settings:
            lines.append(f"{reference_name(bench)} settings: {settings}")
    else:
        lines.append(f"no reference timing: {bench.get('reference_missing', 'none recorded')}")
    compiled = bench.get("compile") or {}
    if "cpu_s" in compiled:
        lines.append(
            f"compile: {compiled['cpu_s']:.2f} CPU s, module {format_bytes(compiled.get('module_bytes'))}, "
            f"peak memory {format_bytes(compiled.get('peak_rss_bytes'))}"
        )
    elif compiled.get("note"):
        lines.append(f"compile: {compiled['note']}")
    if bench.get("load_s") is not None:
        lines.append(f"load: {format_duration(bench['load_s'])}")
    if bench.get("cost_ratio"):
        lines.append(
            f"cost of timing: {bench['cost_s']:.2f} s; the case took {bench['cost_ratio']:.2f}x "
            f"its untimed {bench['untimed_s']:.2f} s{_budget_note(bench.get('timing_budget'))}"
        )
    memory = bench.get("memory") or {}
    if "rss_growth_how" in memory:
        lines.append(
            f"run memory growth: {format_bytes(memory.get('rss_growth_bytes'))} "
            f"({memory['rss_growth_how']})"
        )
    allocated = memory.get("allocated_bytes")
    if isinstance(allocated, dict):
        lines.append(
            f"IREE's allocator for one run: device {format_bytes(allocated.get('device'))}, "
            f"host {format_bytes(allocated.get('host'))} ({memory.get('allocated_how')})"
        )
    lines.append(
        f"worker peak memory: {format_bytes(memory.get('run_peak_rss_bytes'))} "
        f"({memory.get('run_peak_rss_how', 'unknown')})"
    )
    return lines


@dataclasses.dataclass(frozen=True)
class SpeedRow:
    """One timed case in the reports' speed table."""

    case_id: str
    target: str
    iree_median_s: float
    iree_p99_s: float
    samples: int
    reference: str | None
    reference_median_s: float | None
    ratio: float | None
    rss_growth_bytes: int | None
    compile_cpu_s: float | None
    module_bytes: int | None
    note: str


def speed_rows(outcomes: Iterable[Mapping[str, Any]]) -> list[SpeedRow]:
    """The timed cases, highest IREE/reference ratio first (then those without one)."""
    rows = []
    for o in outcomes:
        bench = figures(o)
        if bench is None:
            continue
        iree = summarize(iree_samples(bench))
        ref = reference_samples(bench)
        ref_median = summarize(ref).median_s if ref else None
        compiled = bench.get("compile") or {}
        rows.append(
            SpeedRow(
                case_id=str(o["case_id"]),
                target=str(o["target"]),
                iree_median_s=iree.median_s,
                iree_p99_s=iree.p99_s,
                samples=iree.n,
                reference=reference_name(bench) if ref else None,
                reference_median_s=ref_median,
                ratio=iree.median_s / ref_median if ref_median else None,
                rss_growth_bytes=(bench.get("memory") or {}).get("rss_growth_bytes"),
                compile_cpu_s=compiled.get("cpu_s"),
                module_bytes=compiled.get("module_bytes"),
                note="" if ref else str(bench.get("reference_missing") or "no reference timing"),
            )
        )
    return sorted(rows, key=lambda r: (r.ratio is None, -(r.ratio or 0.0), r.case_id, r.target))


def markdown_speed_section(outcomes: Iterable[Mapping[str, Any]]) -> list[str]:
    """The Markdown report's speed table (empty without timed cases)."""
    rows = speed_rows(outcomes)
    if not rows:
        return []
    lines = [
        "",
        "### Speed and memory (informative, not pass/fail)",
        "",
        "medians of calibrated samples, the reference interleaved with IREE in the same worker; "
        "on a shared machine read the ratio, not the times (docs/speed.md)",
        "",
        "| case | target | IREE median | reference median | ratio | IREE p99 | run memory growth | compile CPU s |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ref = (
            f"{format_duration(r.reference_median_s)} ({r.reference})"
            if r.reference_median_s is not None
            else f"- ({r.note})"
        )
        lines.append(
            f"| {md_code(r.case_id)} | {md_text(r.target)} | {format_duration(r.iree_median_s)} | "
            + f"{md_text(ref)} | "
            + (f"{r.ratio:.2f}x" if r.ratio is not None else "-")
            + f" | {format_duration(r.iree_p99_s)} | {format_bytes(r.rss_growth_bytes)} | "
            + (f"{r.compile_cpu_s:.2f}" if r.compile_cpu_s is not None else "-")
            + " |"
        )
    return lines


def trend_point(outcome: Mapping[str, Any]) -> dict[str, float] | None:
    """What the history keeps of a night's figures for one case: the IREE/reference ratio,
    IREE's median, the compile's CPU seconds and the run's memory growth (None: not timed)."""
    bench = figures(outcome)
    if bench is None:
        return None
    iree = summarize(iree_samples(bench)).median_s
    ref = reference_samples(bench)
    point = {
        "iree_median_s": iree,
        "ratio": iree / summarize(ref).median_s if ref else None,
        "compile_cpu_s": (bench.get("compile") or {}).get("cpu_s"),
        "rss_growth_bytes": (bench.get("memory") or {}).get("rss_growth_bytes"),
    }
    return {k: float(v) for k, v in point.items() if isinstance(v, (int, float))}


TREND_SERIES = (
    ("ratio", "IREE / reference (median)", "x"),
    ("compile_cpu_s", "compile CPU seconds", "s"),
    ("rss_growth_bytes", "run memory growth (MiB)", "MiB"),
)


def trend_charts(points: list[tuple[str, Mapping[str, float]]]) -> list[dict[str, Any]]:
    """Inline SVG line charts, one per series, over the nights (oldest first) that have it."""
    charts = []
    width, height, pad = 320, 90, 8
    for key, title, unit in TREND_SERIES:
        series = [(night, p[key]) for night, p in points if key in p]
        if not series:
            continue
        values = [v / (1 << 20) if unit == "MiB" else v for _, v in series]
        low, high = min(values), max(values)
        span = (high - low) or max(abs(high), 1e-12)
        step = (width - 2 * pad) / max(len(values) - 1, 1)
        xy = [
            (pad + i * step, height - pad - (v - low) / span * (height - 2 * pad))
            for i, v in enumerate(values)
        ]
        charts.append(
            {
                "key": key,
                "title": title,
                "width": width,
                "height": height,
                "polyline": " ".join(f"{x:.1f},{y:.1f}" for x, y in xy),
                "dots": [
                    {"x": x, "y": y, "label": f"{night}: {v:.3g} {unit}"}
                    for (x, y), (night, _), v in zip(xy, series, values)
                ],
                "last": f"{values[-1]:.3g} {unit}",
                "range": f"{low:.3g} to {high:.3g} {unit}",
            }
        )
    return charts


def _budget_note(fraction: object) -> str:
    """The bound the case's timing kept to, as check-model prints it."""
    if isinstance(fraction, (int, float)) and not isinstance(fraction, bool) and fraction > 0:
        return f" (budget: {1 + fraction:.2f}x)"
    return ""
