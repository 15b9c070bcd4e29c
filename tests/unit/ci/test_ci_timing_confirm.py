"""run-shard's timing confirm, in process: the fold of a second timing into the results
(confirm_runs), the confirm run's command, and the pull request view's speed section,
which lists a time change only when both sides had two timing runs (issue 32). The
commands themselves run in tests/e2e/ci/test_ci_timing_confirm_commands.py."""

from __future__ import annotations

import argparse
import copy
import json

import pytest

from ci import _timing_confirm as tc
from ci import diff_results, pr_comment
from ci import run_shard as rs
from ci.cli import command_parser
from iree_conformance.report import speed
from tests.support.ci_helpers import REPO

SAMPLES = [1e-3 * (1 + 0.01 * (i % 7)) for i in range(40)]


def bench(factor: float = 1.0, **extra) -> dict:
    return {
        "iree": {"samples_s": [x * factor for x in SAMPLES], "loops": 1, "summary": {"n": 40}},
        "reference": {
            "name": "onnxruntime",
            "interleaved": True,
            "samples_s": list(SAMPLES),
            "loops": 1,
            "settings": {"providers": ["CPUExecutionProvider"]},
        },
        "memory": {"run_peak_rss_bytes": 100 << 20},
        "compile": {"module_bytes": 50_000, "cpu_s": 1.0},
        **extra,
    }


def outcome(case_id: str, figures: dict | None = None, target: str = "llvm-cpu", **extra) -> dict:
    metrics = {"benchmark": figures} if figures is not None else {}
    return {
        "case_id": case_id,
        "suite": "onnx_models",
        "target": target,
        "status": "pass",
        "verdict": "pass",
        "metrics": metrics,
        **extra,
    }


# -- the fold ---------------------------------------------------------------------------


def test_fold_adds_only_the_samples_to_the_matching_timed_case():
    earlier = {"iree": {"samples_s": [1.0], "loops": 1}}
    results = {
        "outcomes": [
            outcome("a", bench(confirm_runs=[earlier])),
            outcome("b"),  # not timed in the shard's run: nothing to confirm
            outcome("c", bench()),  # timed, but the confirm run has no figures for it
            outcome("a", bench(), target="vmvx"),
        ]
    }
    before = copy.deepcopy(results)
    confirm = [
        outcome("a", bench(1.1)),
        outcome("b", bench(1.1)),
        outcome("c"),
        outcome("d", bench()),  # not in the results
    ]
    assert tc.fold(results, confirm) == 1
    a, b, c, vmvx = results["outcomes"]
    runs = a["metrics"]["benchmark"]["confirm_runs"]
    assert runs[0] == earlier and len(runs) == 2
    assert runs[1] == {
        "iree": {"samples_s": [x * 1.1 for x in SAMPLES], "loops": 1},
        "reference": {
            "name": "onnxruntime",
            "interleaved": True,
            "samples_s": list(SAMPLES),
            "loops": 1,
        },
    }
    assert (b, c, vmvx) == tuple(before["outcomes"][1:])
    # What the comparison reads (report/speed.py): the case now has three timing runs.
    assert len(speed.runs_of(a["metrics"]["benchmark"])) == 3


def test_fold_matches_os_and_arch_when_outcomes_carry_them():
    results = {"outcomes": [outcome("a", bench(), os="linux", arch="x86_64")]}
    other_os = outcome("a", bench(1.2), os="windows", arch="x86_64")
    assert tc.fold(results, [other_os]) == 0
    assert "confirm_runs" not in results["outcomes"][0]["metrics"]["benchmark"]
    same = outcome("a", bench(1.2), os="linux", arch="x86_64")
    assert tc.fold(results, [same]) == 1


def test_timed_cases_and_their_target_groups():
    outcomes = [
        outcome("m1", bench()),
        outcome("m2", bench()),
        outcome("op", None),
        outcome("m1", bench(), target="vmvx"),
        outcome("m2", bench(), target="vmvx"),
        outcome("m1", bench(), target="llvm-cpu-sync"),
        outcome("broken", {"iree": {"samples_s": []}}),
    ]
    timed = tc.timed_cases(outcomes)
    assert timed == {"llvm-cpu": ["m1", "m2"], "llvm-cpu-sync": ["m1"], "vmvx": ["m1", "m2"]}
    assert sorted(tc.target_groups(timed)) == [
        (["llvm-cpu", "vmvx"], ["m1", "m2"]),
        (["llvm-cpu-sync"], ["m1"]),
    ]


# -- the confirm run's command ------------------------------------------------------------


def confirm_line(argv: list[str], monkeypatch, extra: str = "") -> list[str]:
    monkeypatch.setenv(rs.EXTRA_ARGS_ENV, extra)
    for name in ("IREE_CONFORMANCE_ZOO_MANIFEST", "IREE_CONFORMANCE_ZOO_MIRROR"):
        monkeypatch.delenv(name, raising=False)
    args = command_parser("run-shard", rs).parse_args(argv)
    profile, corpora = rs.load_profile(args.profile)
    targets = args.target or profile["targets"]
    return rs.confirm_command(args, profile, corpora, "linux", targets, "T.txt", "C.json")


def test_the_confirm_command_repeats_the_selection_not_the_shard_or_its_outputs(
    tmp_path, monkeypatch
):
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"llvm-cpu:stablehlo/add_f32": 1.0}), encoding="utf-8")
    corpus = tmp_path / "stablehlo"
    (corpus / "stablehlo" / "testdata").mkdir(parents=True)
    argv = ["--profile", "nightly", "--shard", "2/4", "--durations-file", str(durations)]
    argv += ["--corpus", f"stablehlo={corpus}", "--update-expectations", "--report-json"]
    argv += ["r.json", "--", "-x", "--junitxml", "j.xml"]
    cmd = confirm_line(argv, monkeypatch, "--onnx-ops-sample 20 --record-durations=d.json")
    line = " ".join(cmd)
    for kept in (
        " -m pytest conformance -m stablehlo or onnx_ops or onnx_models --target llvm-cpu -n 2",
        "--zoo-max-bytes 100000000",
        "--zoo-manifest https://",
        "--stablehlo-dir",
        "--onnx-ops-sample 20",
        " -x ",
    ):
        assert kept in line, kept
    for dropped in ("--shard", "--durations-file", "--update-expectations", "r.json"):
        assert dropped not in line, dropped
    assert "--record-durations" not in line and "--junitxml" not in line and "j.xml" not in line
    assert cmd[-7:] == [
        "--cases-file",
        "T.txt",
        "--report-json",
        "C.json",
        "--benchmark",
        "--retries",
        "0",
    ]


def test_the_profiles_turn_it_on_and_the_option_overrides_them():
    parser = command_parser("run-shard", rs)
    for name in ("smoke", "nightly", "nightly-targets"):
        profile, _ = rs.load_profile(name)
        assert profile["timing_confirm"] is True
        assert rs.timing_confirm_wanted(parser.parse_args(["--profile", name]), profile)
        off = parser.parse_args(["--profile", name, "--no-timing-confirm"])
        assert not rs.timing_confirm_wanted(off, profile)
    on = parser.parse_args(["--timing-confirm"])
    assert rs.timing_confirm_wanted(on, {}) and not rs.timing_confirm_wanted(
        parser.parse_args([]), {}
    )


@pytest.mark.parametrize(
    "words, kept",
    [
        (["-x", "--shard", "1/2", "-k", "add"], ["-x", "-k", "add"]),
        (["--shard=1/2", "--report-json", "a b.json", "-q"], ["-q"]),
        (["--update-expectations", "-x"], ["-x"]),
        (["--update-expectations", "overlay", "-x"], ["-x"]),
        (["--update-expectations=base", "--durations-file", "d.json"], []),
        (["--record-durations"], []),  # a value missing at the end: dropped, nothing else
    ],
)
def test_without_outputs(words, kept):
    assert rs.without_outputs(words) == kept


def test_a_confirm_that_cannot_start_is_a_warning(tmp_path, monkeypatch, capsys):
    results = tmp_path / "results.json"
    text = json.dumps({"schema": 1, "metadata": {}, "outcomes": [outcome("a", bench())]})
    results.write_text(text, encoding="utf-8")

    def refuse(*args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", "python")

    monkeypatch.setattr(rs.subprocess, "run", refuse)
    args = argparse.Namespace(
        tests="conformance",
        target=None,
        corpus=[],
        skip_missing_corpora=True,
        dry_run=False,
        shard=None,
        durations_file=None,
        report_json=str(results),
        update_expectations=None,
        pytest_args=[],
    )
    profile = {"targets": ["llvm-cpu"]}
    assert rs.time_again(args, profile, {}, "linux", results, {}) == 0
    assert "timing confirm did not start" in capsys.readouterr().err
    assert results.read_text(encoding="utf-8") == text


# -- the pull request view's speed section ------------------------------------------------


def merged(*outcomes: dict) -> dict:
    return {
        "runs": [{"os": "linux", "arch": "x86_64"}],
        "outcomes": [{**o, "os": "linux", "arch": "x86_64"} for o in outcomes],
    }


def side(factor: float, runs: int, rss: int = 100 << 20) -> dict:
    figures = bench(factor)
    figures["memory"] = {"rss_growth_bytes": rss, "rss_growth_how": "VmHWM over the calls"}
    again = [
        {"iree": {"samples_s": [x * factor * (1 + 0.002 * i) for x in SAMPLES]}}
        for i in range(1, runs)
    ]
    if again:
        figures["confirm_runs"] = again
    return figures


def speed_diff(base_runs: int, new_runs: int) -> dict:
    base = merged(outcome("m", side(1.0, base_runs)))
    now = merged(outcome("m", side(1.3, new_runs, rss=150 << 20)))
    return diff_results.compare(now, base)


def test_with_one_run_a_side_time_changes_are_not_listed_memory_is():
    diff = speed_diff(1, 1)
    assert [e["change"].split(" by ")[0] for e in diff["speed"]] == ["more memory"]
    assert diff["speed_runs"] == {
        "timed": 1,
        "time_not_judged": 1,
        "baseline_min": 1,
        "baseline_max": 1,
        "current_min": 1,
        "current_max": 1,
    }
    markdown = diff_results.render_markdown(diff, "main")
    assert "1 timing run(s) per case in the baseline, 1 now" in markdown
    assert "Time changes of 1 case(s) are not listed" in markdown
    mixed = speed_diff(1, 2)
    assert [e["change"].split(" by ")[0] for e in mixed["speed"]] == ["more memory"]
    assert "1 timing run(s) per case in the baseline, 2 now" in diff_results.render_markdown(
        mixed, "main"
    )


def test_with_two_runs_a_side_time_changes_are_listed():
    diff = speed_diff(2, 2)
    kinds = sorted(e["change"].split(" by ")[0] for e in diff["speed"])
    assert kinds == ["more memory", "slower"]
    assert diff["speed_runs"]["time_not_judged"] == 0
    markdown = diff_results.render_markdown(diff, "main")
    assert "2 timing run(s) per case in the baseline, 2 now" in markdown
    assert "not listed" not in markdown


def test_the_comment_says_how_many_runs_and_why_times_are_missing():
    one = pr_comment.render(pr_comment.validate_diff(speed_diff(1, 1)), None, None)
    assert "### Significantly slower or larger than main (1)" in one
    assert "Time changes of 1 case(s) are not listed" in one
    two = pr_comment.render(pr_comment.validate_diff(speed_diff(2, 2)), None, None)
    assert "### Significantly slower or larger than main (2)" in two
    assert "2 timing run(s) per case in the baseline, 2 now" in two and "not listed" not in two
    quiet = speed_diff(2, 2)
    quiet["speed"] = []
    body = pr_comment.render(pr_comment.validate_diff(quiet), None, None)
    assert "Significantly slower" not in body and "Speed: 1 case(s) timed" in body


def test_the_comment_validates_speed_runs_and_reads_older_diffs():
    assert pr_comment.validate_diff({})["speed_runs"] is None  # an older diff_results.py
    for bad in ({"timed": -1}, {"timed": "1"}, {"current_max": True}, [1]):
        with pytest.raises(pr_comment.CIError, match="speed_runs"):
            pr_comment.validate_diff({"speed_runs": bad})
    assert "Speed:" not in pr_comment.render(pr_comment.validate_diff({}), None, None)


def test_the_docs_say_how_the_pull_request_view_judges_speed():
    text = (REPO / "docs" / "ci-pull-requests.md").read_text(encoding="utf-8")
    assert "timing_confirm" in text and "confirm_runs" in text
