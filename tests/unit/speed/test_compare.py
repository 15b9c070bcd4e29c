"""report/speed.py and ``iree-conformance compare``: significance, effect size, no data."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from iree_conformance.cli.main import main
from iree_conformance.report import speed

GROWTH_HOW = "VmHWM over IREE's timed calls minus VmRSS just before (heap trimmed)"
ALLOCATED_HOW = "IREE's allocator, bytes given out for one run"


def _outcome(
    case_id, samples=None, status="pass", memory=None, module=None, why=None, device=None, peak=None
):
    o = {"case_id": case_id, "target": "cpu", "suite": "s", "status": status, "verdict": status}
    if samples is not None:
        o["metrics"] = {
            "benchmark": {
                "iree": {"samples_s": list(samples), "loops": 1},
                "memory": {
                    "rss_growth_bytes": memory,
                    "rss_growth_how": GROWTH_HOW,
                    "run_peak_rss_bytes": peak,
                    "allocated_bytes": None if device is None else {"device": device, "host": 0},
                    "allocated_how": ALLOCATED_HOW,
                },
                "compile": {"module_bytes": module},
            }
        }
    if why:
        o["info"] = {"benchmark": why}
    return o


def _samples(seed, median=1e-3, n=60, spread=0.05):
    rng = np.random.default_rng(seed)
    return list(median * rng.lognormal(0, spread, size=n))


def _write(tmp_path, name, outcomes):
    path = tmp_path / name
    path.write_text(json.dumps({"schema": 1, "metadata": {}, "outcomes": outcomes}))
    return str(path)


def test_same_distribution_is_not_a_change():
    c = speed.compare_results([_outcome("a", _samples(1))], [_outcome("a", _samples(2))])
    assert c.changes == [] and c.unchanged == 1 and c.timed == 1


def test_a_20_percent_slowdown_is_flagged_with_its_size():
    base = _samples(1)
    c = speed.compare_results([_outcome("a", base)], [_outcome("a", [x * 1.2 for x in base])])
    (change,) = c.slowdowns
    assert change.relative == pytest.approx(0.2)
    assert change.describe().startswith("slower by 20.0 % (p < 0.01")


def test_a_significant_change_under_the_minimum_effect_is_noise():
    base = _samples(1, spread=0.001)
    c = speed.compare_results([_outcome("a", base)], [_outcome("a", [x * 1.05 for x in base])])
    assert speed.p_value(base, [x * 1.05 for x in base]) < 0.01  # significant...
    assert c.changes == []  # ...but inside the 10 % the report ignores


def test_a_large_change_that_is_not_significant_is_not_reported():
    c = speed.compare_results([_outcome("a", [1e-3, 2e-3])], [_outcome("a", [3e-3, 5e-3])])
    assert c.changes == []  # two samples each: no test can tell


def test_no_figures_is_no_data_not_zero():
    c = speed.compare_results([_outcome("a")], [_outcome("a", _samples(1))])
    assert c.changes == [] and c.timed == 0
    assert c.no_data == [(("cpu", "a"), "base: no figures")]


def test_cases_timed_on_neither_side_are_counted_not_listed():
    c = speed.compare_results([_outcome("a"), _outcome("b")], [_outcome("a"), _outcome("b")])
    assert c.no_data == [] and c.untimed == 2
    text = "\n".join(speed.comparison_lines(c))
    assert "2 case(s) passed on both sides and were timed on neither" in text
    assert "No data" not in text


def test_verdict_changes_and_why_a_case_was_not_timed():
    c = speed.compare_results(
        [_outcome("a", _samples(1))],
        [_outcome("a", status="fail", why="not timed: the case failed (fail at compare)")],
    )
    assert c.verdicts == [(("cpu", "a"), "pass", "fail")]
    assert c.no_data == [(("cpu", "a"), "new: not timed: the case failed (fail at compare)")]


def test_memory_and_module_size_growth():
    base = _samples(1)
    c = speed.compare_results(
        [_outcome("a", base, memory=100 << 20, module=50_000)],
        [_outcome("a", base, memory=130 << 20, module=50_100)],
    )
    (change,) = c.changes
    assert change.kind == "memory" and change.worse
    assert "more memory by 30.0 %" in change.describe()


def test_cli_exits_1_on_a_significant_slowdown(tmp_path, capsys):
    base = _samples(1)
    a = _write(tmp_path, "a.json", [_outcome("a", base), _outcome("b", _samples(3))])
    b = _write(
        tmp_path, "b.json", [_outcome("a", [x * 1.2 for x in base]), _outcome("b", _samples(4))]
    )
    assert main(["compare", a, b]) == 1
    out = capsys.readouterr().out
    assert "a on cpu: slower by 20.0 % (p < 0.01" in out
    assert "2 case(s) timed on both sides; 1 without a significant speed change" in out
    assert main(["compare", a, a]) == 0


def test_cli_speedup_exits_0(tmp_path):
    base = _samples(1)
    a = _write(tmp_path, "a.json", [_outcome("a", base)])
    b = _write(tmp_path, "b.json", [_outcome("a", [x * 0.7 for x in base])])
    assert main(["compare", a, b]) == 0


def test_cli_bad_input_is_exit_2(tmp_path, capsys):
    a = _write(tmp_path, "a.json", [])
    assert main(["compare", a, str(tmp_path / "missing.json")]) == 2
    assert "missing.json: results file not found" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{")
    assert main(["compare", str(tmp_path / "bad.json"), a]) == 2
    assert main(["compare", a, a, "--alpha", "2"]) == 2


def test_several_baseline_runs_absorb_a_noisy_machine():
    """Runs that move as a whole (a busier machine) are noise once the baseline shows it."""
    runs = [
        [_outcome("a", _samples(seed, median=m))] for seed, m in ((1, 1e-3), (2, 2e-3), (3, 1.4e-3))
    ]
    new = [_outcome("a", _samples(9, median=1.7e-3))]
    one = speed.compare_results(runs[0], new)
    assert one.slowdowns  # one baseline run cannot tell the machine from IREE...
    many = speed.compare_results(runs[0], new, more_base=runs[1:])
    assert many.changes == [] and many.base_runs == 3  # ...three can


def test_several_stable_baseline_runs_still_see_20_percent():
    runs = [[_outcome("a", _samples(seed, spread=0.02))] for seed in (1, 2, 3)]
    new = [_outcome("a", [x * 1.2 for x in _samples(9, spread=0.02)])]
    (change,) = speed.compare_results(runs[0], new, more_base=runs[1:]).slowdowns
    assert change.relative == pytest.approx(0.2, abs=0.02)


def test_interleaved_reference_ratios_are_the_basis():
    def with_ref(samples, ref):
        o = _outcome("a", samples)
        o["metrics"]["benchmark"]["reference"] = {
            "name": "onnxruntime",
            "interleaved": True,
            "samples_s": ref,
        }
        return o

    base, ref = _samples(1), _samples(2)
    # the whole new run is 2x slower, IREE and onnxruntime alike: the ratio has not moved
    c = speed.compare_results(
        [with_ref(base, ref)], [with_ref([x * 2 for x in base], [x * 2 for x in ref])]
    )
    assert c.changes == []
    c = speed.compare_results([with_ref(base, ref)], [with_ref([x * 1.3 for x in base], ref)])
    (change,) = c.slowdowns
    assert change.basis == "onnxruntime" and "IREE/onnxruntime median" in change.describe()


def test_cli_takes_several_baseline_files(tmp_path, capsys):
    files = [
        _write(tmp_path, f"{i}.json", [_outcome("a", _samples(i, median=m))])
        for i, m in enumerate((1e-3, 2e-3, 1.4e-3, 1.7e-3))
    ]
    assert main(["compare", *files]) == 0
    assert "3 baseline runs" in capsys.readouterr().out
    assert main(["compare", files[0], files[3]]) == 1
    assert "One baseline run" in capsys.readouterr().out
    assert main(["compare", files[0]]) == 2


def test_the_standard_library_tests_agree_with_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    for n1, n2, shift in ((20, 20, 0.0), (50, 80, 0.05), (200, 150, 0.01), (5, 7, 0.5)):
        a = [round(x, 2) for x in rng.lognormal(0, 0.1, n1)]  # rounded: ties
        b = [round(x, 2) for x in rng.lognormal(shift, 0.1, n2)]
        expected = scipy_stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic")
        assert speed.p_value(a, b) == pytest.approx(expected.pvalue, rel=1e-9)
    for df in (5, 6, 8, 20, 100):
        assert speed.t_quantile(0.995, df) == pytest.approx(scipy_stats.t.ppf(0.995, df), rel=2e-3)


def test_report_speed_is_standard_library_only():
    """ci/diff_results runs in a job that installs nothing."""
    import ast
    import sys
    from pathlib import Path

    for module in ("report/speed.py", "common/stats.py"):
        tree = ast.parse((Path(speed.__file__).parents[1] / module).read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in (
                    "iree_conformance",
                    "__future__",
                ), (
                    module,
                    name,
                )


def _runs(seeds, median=1e-3, spread=0.02):
    return [[_outcome("a", _samples(seed, median=median, spread=spread))] for seed in seeds]


def test_a_change_must_show_in_every_new_run():
    """One new run that a busy moment moved is not a change once a second run is there."""
    base = _runs((1, 2, 3))
    moved, quiet = _runs((9,), median=1.5e-3)[0], _runs((10,))[0]
    assert speed.compare_results(base[0], moved, more_base=base[1:]).slowdowns  # one run: fooled
    c = speed.compare_results(base[0], moved, more_base=base[1:], more_new=[quiet])
    assert c.changes == [] and c.new_runs == 2 and c.unchanged == 1
    both = speed.compare_results(
        base[0], moved, more_base=base[1:], more_new=[_runs((11,), median=1.5e-3)[0]]
    )
    ((change,),) = [both.slowdowns]
    assert change.relative == pytest.approx(0.5, abs=0.05)
    # the new runs moved opposite ways: no direction to report
    faster = _runs((12,), median=0.6e-3)[0]
    assert (
        speed.compare_results(base[0], moved, more_base=base[1:], more_new=[faster]).changes == []
    )


def test_cli_new_runs_takes_the_last_files_as_the_judged_build(tmp_path, capsys):
    base = [_write(tmp_path, f"b{i}.json", run) for i, run in enumerate(_runs((1, 2, 3)))]
    slow = [
        _write(tmp_path, f"n{i}.json", run) for i, run in enumerate(_runs((8, 9), median=1.3e-3))
    ]
    assert main(["compare", *base, *slow, "--new-runs", "2"]) == 1
    out = capsys.readouterr().out
    assert "slower by" in out and "2 new runs: a change must be seen in each" in out
    quiet = _write(tmp_path, "q.json", _runs((10,))[0])
    assert main(["compare", *base, slow[0], quiet, "--new-runs", "2"]) == 0
    assert main(["compare", base[0], "--new-runs", "1"]) == 2
    assert main(["compare", *base, "--new-runs", "3"]) == 2
    assert "needs a baseline results file and 3 new one(s)" in capsys.readouterr().err
    assert main(["compare", *base, "--new-runs", "0"]) == 2


def test_only_judges_the_named_cases():
    base = [[_outcome("a", _samples(s)), _outcome("b", _samples(s + 10))] for s in (1, 2, 3)]
    new = [
        _outcome("a", [x * 1.5 for x in _samples(9)]),
        _outcome("b", [x * 1.5 for x in _samples(19)]),
    ]
    c = speed.compare_results(base[0], new, more_base=base[1:], only={("cpu", "b")})
    assert [x.key for x in c.slowdowns] == [("cpu", "b")]


def _with_confirm(outcome, *confirm):
    outcome["metrics"]["benchmark"]["confirm_runs"] = [
        {"iree": {"samples_s": list(s), "loops": 1}} for s in confirm
    ]
    return outcome


def test_confirm_runs_inside_one_file_count_as_runs():
    """A results file whose timed cases were timed again (confirm_runs) judges as
    several runs: two files of two runs each compare as 2 + 2."""
    base = _with_confirm(_outcome("a", _samples(1, spread=0.02)), _samples(2, spread=0.02))
    moved = _samples(9, median=1.5e-3, spread=0.02)
    unconfirmed = _with_confirm(_outcome("a", moved), _samples(10, spread=0.02))
    c = speed.compare_results([base], [unconfirmed])
    assert c.changes == [] and (c.base_runs, c.new_runs) == (2, 2)
    confirmed = _with_confirm(_outcome("a", moved), _samples(11, median=1.5e-3, spread=0.02))
    (change,) = speed.compare_results([base], [confirmed]).slowdowns
    assert change.relative == pytest.approx(0.5, abs=0.05)
    broken = _outcome("a", moved)
    broken["metrics"]["benchmark"]["confirm_runs"] = [{"iree": {}}, "x"]  # ignored, not fatal
    assert speed.runs_of(broken["metrics"]["benchmark"]) == [broken["metrics"]["benchmark"]]


def test_runs_that_timed_different_functions_are_not_compared_on_time():
    """A JAX case times ``main`` beside XLA and ``check_xla`` without it (the budget left
    XLA out): a 2x "slowdown" between them is not a change of IREE."""
    base = _outcome("a", _samples(1))
    new = _outcome("a", [x * 2 for x in _samples(2)])
    base["metrics"]["benchmark"]["iree"]["function"] = "main"
    new["metrics"]["benchmark"]["iree"]["function"] = "check_xla"
    c = speed.compare_results([base], [new])
    assert c.changes == [] and c.timed == 0
    ((key, why),) = c.no_data
    assert key == ("cpu", "a") and "check_xla, main" in why and "--timing-budget" in why
    new["metrics"]["benchmark"]["iree"]["function"] = "main"  # the same function: judged
    assert speed.compare_results([base], [new]).slowdowns


# -- memory that measures the case (issue 45) ---------------------------------------------


def _old_outcome(case_id, samples, peak):
    """An outcome as results files had it before: the worker's high-water mark only."""
    o = _outcome(case_id, samples)
    o["metrics"]["benchmark"]["memory"] = {
        "run_peak_rss_bytes": peak,
        "run_peak_rss_how": "VmHWM reset before the calls",
        "device": {"device_bytes_peak": 800000},
    }
    return o


def test_the_workers_high_water_mark_is_never_compared():
    """Cold (the compiler resident: 340 MiB) against warm (39 MiB), the issue's false
    alarm: the high-water mark is the process's history, and only the growth is judged."""
    base = _samples(1)
    c = speed.compare_results(
        [_outcome("a", base, memory=200_000, peak=340 << 20, device=400_000)],
        [_outcome("a", base, memory=300_000, peak=39 << 20, device=400_000)],
    )
    assert c.changes == [] and c.regressions == []


def test_an_older_files_peak_is_not_judged_against_the_new_figure():
    base = _samples(1)
    for old, new in (
        (_old_outcome("a", base, 340 << 20), _outcome("a", base, memory=1 << 20, peak=39 << 20)),
        (_outcome("a", base, memory=1 << 20, peak=39 << 20), _old_outcome("a", base, 340 << 20)),
    ):
        c = speed.compare_results([old], [new])
        assert c.changes == []
        (why,) = [w for _, w in c.no_data]
        assert "only the worker's high-water mark" in why and "not compared" in why


def test_memory_measured_over_different_things_is_not_compared():
    base = _samples(1)
    other = _outcome("a", base, memory=90 << 20)
    other["metrics"]["benchmark"]["memory"]["rss_growth_how"] = "VmHWM over the checked run"
    c = speed.compare_results([_outcome("a", base, memory=10 << 20)], [other])
    assert c.changes == []
    assert any("memory: measured differently" in why for _, why in c.no_data)


def test_twice_the_device_memory_is_a_regression(tmp_path, capsys):
    base = _samples(1)
    a = _write(tmp_path, "a.json", [_outcome("a", base, device=400_000)])
    b = _write(tmp_path, "b.json", [_outcome("a", base, device=800_000)])
    assert main(["compare", a, b]) == 1
    out = capsys.readouterr().out
    assert "a on cpu: more device memory by 100.0 % (390.6 KiB -> 781.2 KiB)" in out
    assert "Regressions (1; exit status 1): device memory: a on cpu" in out
    assert main(["compare", b, a]) == 0


@pytest.mark.parametrize(("field", "kind"), [("memory", "memory"), ("module", "module size")])
def test_compare_exits_1_on_every_kind_it_lists_and_names_it(tmp_path, capsys, field, kind):
    base = _samples(1)
    a = _write(tmp_path, "a.json", [_outcome("a", base, **{field: 100 << 20})])
    b = _write(tmp_path, "b.json", [_outcome("a", base, **{field: 130 << 20})])
    assert main(["compare", a, b]) == 1
    assert f"Regressions (1; exit status 1): {kind}: a on cpu" in capsys.readouterr().out


def test_a_new_measure_is_judged_and_gates_the_exit_status(tmp_path, capsys, monkeypatch):
    """The hook for later figures (a dispatch count): one more entry of MEASURES."""
    measure = speed.Measure(
        "dispatch count", (), None, 1, "more dispatches", "fewer dispatches",
        value=lambda bench: bench.get("dispatches"),
    )  # fmt: skip
    monkeypatch.setattr(speed, "MEASURES", [*speed.MEASURES, measure])
    monkeypatch.setitem(speed.MEASURE_BY_KIND, "dispatch count", measure)
    base = _samples(1)
    old, new = _outcome("a", base), _outcome("a", base)
    old["metrics"]["benchmark"]["dispatches"] = 10
    new["metrics"]["benchmark"]["dispatches"] = 14
    a, b = _write(tmp_path, "a.json", [old]), _write(tmp_path, "b.json", [new])
    assert main(["compare", a, b]) == 1
    out = capsys.readouterr().out
    assert "a on cpu: more dispatches by 40.0 %" in out
    assert "Regressions (1; exit status 1): dispatch count: a on cpu" in out


def test_one_run_a_side_a_shift_the_whole_run_shares_is_the_machine():
    """An A/A pair on a loaded machine: every case moves by up to 30 % (each case's own
    samples agree), so nothing is listed; the same run with one case 30 % slower is."""
    rng = np.random.default_rng(7)
    cases = [f"c{i}" for i in range(6)]
    base = {c: _samples(i, spread=0.02) for i, c in enumerate(cases)}
    shifts = dict(zip(cases, (1.28, 0.81, 1.17, 1.03, 0.95, 1.0)))
    moved = [_outcome(c, [x * shifts[c] * rng.lognormal(0, 0.01) for x in base[c]]) for c in cases]
    c = speed.compare_results([_outcome(k, v) for k, v in base.items()], moved)
    assert c.changes == [] and c.unchanged == 6
    injected = [_outcome(k, [x * (1.3 if k == "c3" else 1.0) for x in v]) for k, v in base.items()]
    c = speed.compare_results([_outcome(k, v) for k, v in base.items()], injected)
    assert [(ch.key[1], ch.kind) for ch in c.regressions] == [("c3", "time")]


def test_seconds_are_judged_by_the_seconds_cases_shift_not_by_the_quiet_ratios():
    """One run a side: six cases timed against an interleaved reference keep their ratio,
    while the four timed alone (no reference) move by 2x either way with the machine's
    load, as IREE's thread pool does on a shared machine. The ratios' quiet must not make
    the seconds' load look like changes; a 30 % ratio change is still found."""
    rng = np.random.default_rng(11)

    def case(name, samples, ref=None):
        o = _outcome(name, samples)
        if ref is not None:
            o["metrics"]["benchmark"]["reference"] = {
                "name": "xla",
                "interleaved": True,
                "samples_s": ref,
            }
        return o

    ratio_cases = {
        f"r{i}": (_samples(i, spread=0.02), _samples(50 + i, spread=0.02)) for i in range(6)
    }
    alone = {f"s{i}": _samples(20 + i, spread=0.02) for i in range(4)}
    load = dict(zip(alone, (2.6, 0.5, 1.1, 0.9)))
    base = [case(k, s, r) for k, (s, r) in ratio_cases.items()]
    base += [case(k, s) for k, s in alone.items()]

    def jitter(xs, by=1.0):
        return [x * by * rng.lognormal(0, 0.01) for x in xs]

    new = [case(k, jitter(s), jitter(r)) for k, (s, r) in ratio_cases.items()]
    new += [case(k, jitter(s, load[k])) for k, s in alone.items()]
    c = speed.compare_results(base, new)
    assert c.changes == [], [ch.describe() for ch in c.changes]
    slower = [
        case(k, jitter(s, 1.3 if k == "r2" else 1.0), jitter(r))
        for k, (s, r) in ratio_cases.items()
    ]
    slower += [case(k, jitter(s, load[k])) for k, s in alone.items()]
    c = speed.compare_results(base, slower)
    assert [(ch.key[1], ch.kind) for ch in c.regressions] == [("r2", "time")]


def _two_runs(case_id, first, second):
    """An outcome timed twice (its run and a confirm run, as ``ci run-shard`` folds them)."""
    o = _outcome(case_id, first)
    o["metrics"]["benchmark"]["confirm_runs"] = [{"iree": {"samples_s": list(second)}}]
    return o


def test_a_case_whose_runs_on_one_side_disagree_is_noise_in_either_order():
    """Two timings a side: the baseline's agree, the new side's are 3.9x and 2x the
    baseline's (a loaded machine, the A/A pair of 2026-12-04): the spread of each side's
    runs is the noise, so neither order lists it (the baseline's runs alone listed it one
    way and not the other)."""
    quiet = {f"q{i}": (_samples(i, spread=0.02), _samples(40 + i, spread=0.02)) for i in range(6)}
    base = [_two_runs(k, a, b) for k, (a, b) in quiet.items()]
    new = [_two_runs(k, [x * 1.01 for x in a], b) for k, (a, b) in quiet.items()]
    base.append(_two_runs("noisy", _samples(90, spread=0.02), _samples(91, spread=0.02)))
    new.append(
        _two_runs("noisy", [x * 3.9 for x in _samples(92, spread=0.02)],
                  [x * 2.0 for x in _samples(93, spread=0.02)])
    )  # fmt: skip
    for first, second in ((base, new), (new, base)):
        c = speed.compare_results(first, second)
        assert c.changes == [], [(ch.key, ch.describe()) for ch in c.changes]
    slower = [_two_runs(k, [x * 1.5 for x in a], [x * 1.5 for x in b]) for k, (a, b) in quiet.items()
              if k == "q2"]  # fmt: skip
    c = speed.compare_results(base, [o for o in new if o["case_id"] != "q2"] + slower)
    assert [(ch.key[1], ch.kind) for ch in c.regressions] == [("q2", "time")]


def test_many_cases_one_run_a_side_list_no_case_by_chance():
    """91 cases timed once a side, their shifts spread as a loaded machine spreads them
    (normal in logs, the robust spread 0.2): at alpha 0.01 per case about one would be
    listed on every A/A comparison; alpha is the whole comparison's (Bonferroni), so the
    case at 2.9 standard deviations is not listed, and a case 3x slower is."""
    from statistics import NormalDist

    shifts = [NormalDist(0, 0.2).inv_cdf((i + 0.5) / 90) for i in range(90)] + [2.9 * 0.2]
    base = [_outcome(f"c{i}", _samples(i, spread=0.01)) for i in range(91)]

    def moved(extra):
        return [
            _outcome(f"c{i}", [x * np.exp(s + (extra if i == 7 else 0)) for x in _samples(i, spread=0.01)])
            for i, s in enumerate(shifts)
        ]  # fmt: skip

    c = speed.compare_results(base, moved(0.0))
    assert c.changes == [], [(ch.key, ch.describe()) for ch in c.changes]
    assert c.case_alpha == pytest.approx(0.01 / 91)
    c = speed.compare_results(base, moved(np.log(3.0)))
    assert [(ch.key[1], ch.kind) for ch in c.regressions] == [("c7", "time")]


def test_a_tiny_cases_resident_growth_between_workers_is_not_listed():
    """0.1 MiB in one worker, 1.6 MiB in the next (the interpreter's allocator, the same
    case: the A/A pair of 2026-12-04) is under the floor; 40 MiB more is listed."""
    base = _samples(1)
    for new_growth, listed in ((1_646_592, []), (40 << 20, [("a", "memory")])):
        c = speed.compare_results(
            [_outcome("a", base, memory=98_304)], [_outcome("a", base, memory=new_growth)]
        )
        assert [(ch.key[1], ch.kind) for ch in c.changes] == listed


def test_each_references_ratios_are_judged_by_that_references_shift():
    """Two timings a side that agree: eight cases against XLA keep their ratio while the
    six against onnxruntime (threads of its own, unlike XLA's) all move by 1.2-2.4x with
    the load (light_squeezenet's moved 2.3x in a loaded A/A pair, 2026-12-04): the
    onnxruntime cases' shift is their noise, not the XLA cases' quiet. Among quiet onnxruntime cases, one 1.5x
    slower is still listed."""
    rng = np.random.default_rng(5)

    def case(name, ref_name, runs):
        o = _two_runs(name, *(iree for iree, _ in runs))
        bench = o["metrics"]["benchmark"]
        for run, (_, ref) in zip([bench, *bench["confirm_runs"]], runs):
            run["reference"] = {"name": ref_name, "interleaved": True, "samples_s": ref}
        return o

    def jitter(xs, by=1.0):
        return [x * by * rng.lognormal(0, 0.01) for x in xs]

    cases = {f"x{i}": "xla" for i in range(8)} | {f"o{i}": "onnxruntime" for i in range(6)}
    samples = {k: (_samples(i, spread=0.02), _samples(60 + i, spread=0.02))
               for i, k in enumerate(cases)}  # fmt: skip
    load = dict(zip([k for k in cases if k[0] == "o"], (1.25, 1.6, 2.4, 1.9, 1.4, 2.1)))

    def side(by):
        return [
            case(k, ref, [(jitter(s, by(k)), jitter(r)) for _ in range(2)])
            for k, ref in cases.items()
            for s, r in [samples[k]]
        ]

    base = side(lambda k: 1.0)
    loaded = side(lambda k: load.get(k, 1.0))
    for a, b in ((base, loaded), (loaded, base)):
        c = speed.compare_results(a, b)
        assert c.changes == [], [(ch.key, ch.describe()) for ch in c.changes]
    c = speed.compare_results(base, side(lambda k: 1.5 if k == "o3" else 1.0))
    assert [(ch.key[1], ch.kind) for ch in c.regressions] == [("o3", "time")]


def test_a_30_percent_slowdown_among_92_cases_timed_twice_a_side_is_listed():
    """check_aa_quiet's injection: 92 cases, two timings a side, a case's runs apart by
    about 12 % (a quiet typical spread of 0.04 in logs, as the A/A pair of 2026-12-04),
    and the samples of the case whose runs agree made 30 % slower in a copy. The comparison's level (alpha over
    92 cases) is held by the run's shift (rule 5); the spread between runs tests at alpha,
    as at the comparison's level with so few runs it hid the injected case (2026-12-04).
    Two independent sides list nothing."""
    rng = np.random.default_rng(3)

    def run(i):  # a run moves as a whole; c40's two agree (the case check_aa_quiet picks)
        shift = 1.0 if i == 40 else rng.lognormal(0, 0.12)
        return [x * shift for x in _samples(i, spread=0.02)]

    def side():
        return [_two_runs(f"c{i}", run(i), run(i)) for i in range(92)]

    base = side()
    assert speed.compare_results(base, side()).changes == []
    slower = copy.deepcopy(base)
    bench = slower[40]["metrics"]["benchmark"]
    for timing in (bench, *bench["confirm_runs"]):
        timing["iree"]["samples_s"] = [x * 1.3 for x in timing["iree"]["samples_s"]]
    c = speed.compare_results(base, slower)
    assert [(ch.key[1], ch.kind) for ch in c.regressions] == [("c40", "time")]
