"""run-shard's timing confirm as CI runs it (issue 32): the dry run's two commands, the
confirm run against a stand-in for conformance/ (fold, crash, unreadable results, no
timed case) and a real model timed twice. The fold and the speed section, in process:
tests/unit/ci/test_ci_timing_confirm.py."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from iree_conformance.report import speed
from tests.support.ci_helpers import clean_env, run_ci

# -- the dry run ------------------------------------------------------------------------


def dry_lines(*args: str) -> tuple[str, str | None, str]:
    result = run_ci("run-shard", "--dry-run", *args)
    out = result.stdout.splitlines()
    main = next(line for line in out if line.startswith("+ "))
    then = [line for line in out if line.startswith("then, for the timed cases")]
    return main, then[0] if then else None, result.stderr


def test_the_dry_run_prints_the_confirm_command_when_it_is_on():
    main, then, _ = dry_lines("--profile", "smoke", "--report-json", "r.json")
    assert then is not None and "--report-json" in main
    assert then.endswith(
        "--cases-file TIMED_CASES.txt --report-json CONFIRM.json --benchmark --retries 0"
    )
    selection = then.split(": ", 1)[1].split(" --cases-file")[0]
    assert main[2:].split(" --report-json")[0] == selection  # the same selection
    off = dry_lines("--profile", "smoke", "--report-json", "r.json", "--no-timing-confirm")
    assert off[1] is None
    _, then, stderr = dry_lines("--profile", "smoke")
    assert then is None and "timing confirm needs --report-json" in stderr


# -- running it: a stand-in for conformance/ ----------------------------------------------

FAKE_CONFTEST = textwrap.dedent("""\
    import json, os, shutil, sys
    from pathlib import Path

    def pytest_addoption(parser):
        for name in ("--report-json", "--target", "--cases-file", "--retries"):
            parser.addoption(name, action="append")
        parser.addoption("--benchmark", action="store_true")

    def bench(factor):
        return {"iree": {"samples_s": [0.001 * factor] * 5, "loops": 1},
                "reference": {"name": "numpy", "interleaved": True,
                              "samples_s": [0.002] * 5, "loops": 1},
                "memory": {"run_peak_rss_bytes": 1}}

    def outcome(case_id, figures):
        return {"case_id": case_id, "suite": "onnx_models", "target": "llvm-cpu",
                "status": "pass", "verdict": "pass",
                "metrics": {"benchmark": figures} if figures else {}}

    def pytest_sessionfinish(session, exitstatus):
        opt = session.config.option
        report = Path(opt.report_json[-1])
        mode = os.environ.get("FAKE_CONFIRM", "ok")
        if not opt.cases_file:  # the shard's own run
            cases = [outcome("timed", bench(1.0)), outcome("untimed", None)]
            if mode == "none":
                cases = [outcome("untimed", None)]
            report.write_text(json.dumps({"schema": 1, "metadata": {}, "outcomes": cases}))
            shutil.copy(report, report.with_name("as-written.json"))
            return
        asked = Path(opt.cases_file[-1]).read_text().split()
        Path(os.environ["FAKE_LOG"]).write_text(json.dumps(
            {"cases": asked, "benchmark": opt.benchmark, "retries": opt.retries}))
        if mode == "crash":
            os._exit(70)
        if mode == "garbage":
            report.write_text("{not json")
            return
        figures = [outcome(c, bench(1.5)) for c in asked]
        report.write_text(json.dumps({"schema": 1, "metadata": {}, "outcomes": figures}))
    """)

FAKE_TEST = "import os\n\ndef test_it():\n    assert not os.environ.get('FAKE_MAIN_FAILS')\n"


@pytest.fixture
def fake(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "conftest.py").write_text(FAKE_CONFTEST, encoding="utf-8")
    (project / "test_fake.py").write_text(FAKE_TEST, encoding="utf-8")
    profiles = tmp_path / "profiles.toml"
    profiles.write_text(
        '[profiles.tiny]\ntargets = ["llvm-cpu"]\nargs = ["-p", "no:cacheprovider"]\n'
        "timing_confirm = true\n",
        encoding="utf-8",
    )
    return tmp_path


def run_fake(fake: Path, mode: str, *more: str, main_fails: bool = False):
    env = clean_env(FAKE_CONFIRM=mode, FAKE_LOG=str(fake / "log.json"))
    if main_fails:
        env["FAKE_MAIN_FAILS"] = "1"
    report = fake / "out" / "results.json"
    result = run_ci(
        "run-shard",
        "--profiles",
        fake / "profiles.toml",
        "--profile",
        "tiny",
        "--tests",
        fake / "project",
        "--report-json",
        report,
        *more,
        env=env,
        check=False,
    )
    return result, report


def test_the_timed_cases_run_again_and_their_timing_is_folded(fake):
    result, report = run_fake(fake, "ok", main_fails=True)
    assert result.returncode == 1, result.stderr  # the shard's own status, not the confirm's
    assert "timing again: 1 timed case(s)" in result.stdout
    assert "timing again: 1 of 1 case(s) timed twice" in result.stdout
    log = json.loads((fake / "log.json").read_text(encoding="utf-8"))
    assert log == {"cases": ["timed"], "benchmark": True, "retries": ["0"]}
    timed, untimed = json.loads(report.read_text(encoding="utf-8"))["outcomes"]
    (again,) = timed["metrics"]["benchmark"]["confirm_runs"]
    assert again["iree"]["samples_s"] == [0.0015] * 5 and "memory" not in again
    assert again["reference"]["name"] == "numpy"
    assert untimed["metrics"] == {}


def test_no_timed_case_runs_nothing(fake):
    result, report = run_fake(fake, "none")
    assert result.returncode == 0
    assert "timing again: 0 timed case(s)" in result.stdout
    assert not (fake / "log.json").exists()
    assert report.read_bytes() == report.with_name("as-written.json").read_bytes()


def test_off_runs_nothing(fake):
    result, report = run_fake(fake, "ok", "--no-timing-confirm")
    assert result.returncode == 0 and "timing again" not in result.stdout
    assert not (fake / "log.json").exists()
    assert report.read_bytes() == report.with_name("as-written.json").read_bytes()


@pytest.mark.parametrize(
    "mode, message",
    [
        ("crash", "timing confirm: pytest exited 70; one timing run kept"),
        ("garbage", "not valid JSON"),
    ],
)
def test_a_failed_confirm_is_a_warning_and_leaves_the_results_alone(fake, mode, message):
    result, report = run_fake(fake, mode)
    assert result.returncode == 0, result.stderr
    assert (fake / "log.json").exists()  # it did run
    assert message in result.stderr and "warning" in result.stderr
    assert report.read_bytes() == report.with_name("as-written.json").read_bytes()


def test_a_real_model_is_timed_twice(tmp_path):
    """sigmoid.onnx from onnxruntime's wheel, through --onnx-dir (timed by default), in a
    store of its own: the confirm run reuses the compiled module."""
    onnxruntime = pytest.importorskip("onnxruntime")
    model = Path(onnxruntime.__file__).parent / "datasets" / "sigmoid.onnx"
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(model, models / "sigmoid.onnx")
    profiles = tmp_path / "profiles.toml"
    args = ["-p", "no:cacheprovider", "--onnx-dir", str(models), "--store-dir"]
    args += [str(tmp_path / "store"), "--timing-budget", "full"]  # as CI's profiles do
    profiles.write_text(
        '[profiles.one]\nmarkers = "onnx_dir"\ntargets = ["llvm-cpu"]\n'
        f"args = {json.dumps(args)}\ntiming_confirm = true\n",
        encoding="utf-8",
    )
    report = tmp_path / "results.json"
    result = run_ci(
        "run-shard", "--profiles", profiles, "--profile", "one", "--report-json", report
    )
    assert "timing again: 1 of 1 case(s) timed twice" in result.stdout, result.stdout
    (case,) = json.loads(report.read_text(encoding="utf-8"))["outcomes"]
    assert case["case_id"] == "onnx-dir/sigmoid.onnx" and case["verdict"] == "pass"
    figures = case["metrics"]["benchmark"]
    (again,) = figures["confirm_runs"]
    assert set(again) == {"iree", "reference"} and again["iree"]["samples_s"]
    assert again["iree"]["samples_s"] != figures["iree"]["samples_s"]
    assert again["reference"]["name"] == figures["reference"]["name"]
    assert len(speed.runs_of(figures)) == 2
