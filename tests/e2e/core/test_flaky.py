"""Retries, the flaky verdict and flaky manifest entries, end to end through pytest."""

import json
import os
import subprocess
import sys

import pytest

from iree_conformance.engine.verdicts import judge
from iree_conformance.expectations.lookup import ExpectationsError, load_expectations
from iree_conformance.model.outcome import Outcome
from tests.support.core_helpers import ROOT, output

from .test_stablehlo_checks import CUSTOM_CALL


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "ok.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "6.0"))
    return root


@pytest.fixture
def run(corpus, store, monkeypatch, run_conformance):
    """Runs the corpus with tests.support.fault_plugin; returns pytester's RunResult and the Outcome."""
    # for -p tests.support.fault_plugin, and the worker runs this tree's library
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "python"), str(ROOT)]))

    def run(manifests, report, *args, once="", always="", kind="crash"):
        monkeypatch.setenv("FAULT_ONCE", once)
        monkeypatch.setenv("FAULT_ALWAYS", always)
        monkeypatch.setenv("FAULT_KIND", kind)
        result = run_conformance(
            "-p",
            "tests.support.fault_plugin",
            "--stablehlo-dir",
            str(corpus),
            "--store-dir",
            str(store),
            "--expectations-dir",
            str(manifests),
            "-k",
            "stablehlo-ext",
            "--report-json",
            str(report),
            *args,
        )
        return result, json.loads(report.read_text())["outcomes"][0]

    return run


def counts(result) -> dict[str, int]:
    """pytest's summary line as counts, flaky included (assert_outcomes knows no flaky)."""
    return {k: v for k, v in result.parseoutcomes().items() if k != "deselected"}


def test_a_result_that_changes_on_retry_is_flaky_not_green(tmp_path, run):
    manifests = tmp_path / "exp"
    manifests.mkdir()
    result, outcome = run(manifests, tmp_path / "r.json", once="stablehlo-ext/ok")
    assert result.ret == 0, output(result)
    assert counts(result) == {"flaky": 1}  # never counted as passed
    assert outcome["verdict"] == "flaky" and outcome["status"] == "pass"
    assert [a["kind"] for a in outcome["attempts"]] == ["crash"]
    assert "FLAKY llvm-cpu:stablehlo-ext/ok" in result.stdout.str()


def test_a_first_try_the_machine_failed_is_no_flake(tmp_path, run):
    manifests = tmp_path / "exp"
    manifests.mkdir()
    result, outcome = run(manifests, tmp_path / "r.json", once="stablehlo-ext/ok", kind="kill")
    # Was: flaky (crash then pass), as if the program's result had changed.
    assert counts(result) == {"passed": 1}, output(result)
    assert outcome["verdict"] == "pass", outcome
    assert [a["kind"] for a in outcome["attempts"]] == ["fail-run"], json.dumps(outcome)


def test_a_result_that_repeats_on_retry_stays_red(tmp_path, run):
    manifests = tmp_path / "exp"
    manifests.mkdir()
    result, outcome = run(manifests, tmp_path / "r.json", always="stablehlo-ext/ok")
    result.assert_outcomes(failed=1)
    assert outcome["verdict"] == "fail" and outcome["status"] == "crash"
    assert [a["kind"] for a in outcome["attempts"]] == ["crash"]


def test_retries_zero_reports_the_first_result(tmp_path, run):
    manifests = tmp_path / "exp"
    manifests.mkdir()
    result, outcome = run(manifests, tmp_path / "r.json", "--retries", "0", once="stablehlo-ext/ok")
    result.assert_outcomes(failed=1)
    assert outcome["verdict"] == "fail" and outcome["attempts"] == []


def test_update_expectations_records_a_flaky_case_and_it_stays_flaky(tmp_path, corpus, run):
    manifests = tmp_path / "exp"
    manifests.mkdir()
    run(manifests, tmp_path / "r.json", "--update-expectations", once="stablehlo-ext/ok")
    text = (manifests / "llvm-cpu.toml").read_text()
    assert (
        '"stablehlo-ext/ok" = { expect = ["pass", "crash"], reason = "flaky: pass and crash' in text
    ), text
    # Declared flaky: a clean pass is flaky too (never a pass), a crash is flaky, another kind is red.
    result, outcome = run(manifests, tmp_path / "r.json")
    assert counts(result) == {"flaky": 1} and outcome["verdict"] == "flaky", output(result)
    result, outcome = run(
        manifests, tmp_path / "r.json", "--retries", "0", always="stablehlo-ext/ok"
    )
    assert counts(result) == {"flaky": 1} and outcome["verdict"] == "flaky", output(result)
    (corpus / "ok.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "7.0"))
    result, outcome = run(manifests, tmp_path / "r.json", "--retries", "0")
    result.assert_outcomes(failed=1)
    assert outcome["verdict"] == "fail"
    assert "expected one of pass|crash" in result.stdout.str()


def test_flaky_stage_lists_are_validated(tmp_path):
    (tmp_path / "llvm-cpu.toml").write_text('[xfail]\n"a" = { stage = ["pass"], reason = "x" }\n')
    with pytest.raises(ExpectationsError, match=r"llvm-cpu.toml:2: flaky stage list"):
        load_expectations(tmp_path, "llvm-cpu", "linux")
    (tmp_path / "llvm-cpu.toml").write_text(
        '[xfail]\n"a" = { stage = ["pass", "fail-numerics"], reason = "x" }\n'
    )
    exp = load_expectations(tmp_path, "llvm-cpu", "linux")
    ok = Outcome("a", "s", "llvm-cpu", stage="compare", status="pass")
    bad = Outcome("a", "s", "llvm-cpu", stage="compile", status="error")
    assert judge(exp, ok).name == "flaky"
    assert judge(exp, Outcome("a", "s", "llvm-cpu", stage="compare", status="fail")).name == "flaky"
    assert judge(exp, bad).name == "fail"


@pytest.mark.parametrize(
    "kind",
    [
        "pass",
        "crash",
        "timeout",
        "fail-numerics",
        "fail-compile",
        "fail-import",
        "fail-run",
        "fail-reference",
    ],
)
def test_outcome_of_kind_round_trips(kind):
    assert Outcome.of_kind("a", "s", "t", kind).observed == kind


def test_flake_finder_lists_a_case_whose_result_varies(tmp_path, corpus):
    """Two runs through the CLI; the fault plugin crashes the case in fresh-worker runs only."""
    (corpus / "steady.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "6.0"))
    manifests = tmp_path / "exp"
    manifests.mkdir()
    (manifests / "llvm-cpu.toml").write_text("[xfail]\n")
    plugin = tmp_path / "fresh_fault.py"
    plugin.write_text(
        "import dataclasses\n"
        "from iree_conformance.engine import pipeline\n"
        "def pytest_configure(config):\n"
        "    if not config.getoption('--fresh-worker'):\n"
        "        return\n"
        "    real = pipeline.build_job\n"
        "    def build_job(attempt, *a, **k):\n"
        "        job = real(attempt, *a, **k)\n"
        "        if attempt.case.case_id == 'stablehlo-ext/ok':\n"
        "            job = dataclasses.replace(job, fault=('run', 'crash'))\n"
        "        return job\n"
        "    pipeline.build_job = build_job\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    out_json = tmp_path / "flakes.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "flakes",
            "--repeat",
            "2",
            "--conformance-dir",
            str(ROOT / "conformance"),
            "--json",
            str(out_json),
            "--update-expectations",
            "--expectations-dir",
            str(manifests),
            "--",
            "-p",
            "fresh_fault",
            "--stablehlo-dir",
            str(corpus),
            "-k",
            "stablehlo-ext",
            "--expectations-dir",
            str(manifests),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 cases, 2 runs each: 1 varied" in proc.stdout
    assert "FLAKY llvm-cpu:stablehlo-ext/ok: crash 1/2, pass 1/2" in proc.stdout
    found = json.loads(out_json.read_text())
    assert [f["case_id"] for f in found["flaky"]] == ["stablehlo-ext/ok"]
    assert (
        '"stablehlo-ext/ok" = { expect = ["pass", "crash"]'
        in (manifests / "llvm-cpu.toml").read_text()
    )


def test_report_shows_flaky_and_cases_that_differ_across_targets():
    from iree_conformance.report.markdown import differs_across_targets, render_markdown

    outcomes = [
        {
            "case_id": "a",
            "suite": "s",
            "target": "llvm-cpu",
            "status": "pass",
            "stage": "compare",
            "verdict": "pass",
        },
        {
            "case_id": "a",
            "suite": "s",
            "target": "vmvx",
            "status": "error",
            "stage": "compile",
            "verdict": "xfail",
            "expected": "fail-compile",
        },
        {
            "case_id": "b",
            "suite": "s",
            "target": "llvm-cpu",
            "status": "pass",
            "stage": "compare",
            "verdict": "flaky",
            "attempts": [{"kind": "crash"}],
        },
        {
            "case_id": "b",
            "suite": "s",
            "target": "vmvx",
            "status": "pass",
            "stage": "compare",
            "verdict": "pass",
        },
        {
            "case_id": "c",
            "suite": "s",
            "target": "vmvx",
            "status": "skip",
            "stage": "prepare",
            "verdict": "skip",
        },
    ]
    assert differs_across_targets(outcomes) == [("a", {"llvm-cpu": "pass", "vmvx": "fail-compile"})]
    text = render_markdown({"metadata": {}, "outcomes": outcomes})
    assert "| s | llvm-cpu | 1 | 0 | 1 | 0 | 0 | 0 | 2 |" in text
    assert "### Flaky (1)" in text and "`b` (llvm-cpu): crash then pass" in text
    assert "### Differs across targets (1)" in text and "| `a` | pass | fail-compile |" in text


def test_host_specific_manifest_records_the_cpu_and_warns_on_another(tmp_path, run_conformance):
    from iree_conformance.expectations.lookup import recorded_on, write_updated_manifest

    path = tmp_path / "llvm-cpu-host.toml"
    failing = Outcome(
        "stablehlo/x",
        "stablehlo",
        "llvm-cpu-host",
        stage="compile",
        status="error",
        diagnostics=["error: boom"],
    )
    assert write_updated_manifest(path, "llvm-cpu-host", [failing], host="x86_64:Some CPU:abc")
    assert recorded_on(path) == "x86_64:Some CPU:abc"
    assert (
        load_expectations(tmp_path, "llvm-cpu-host", "linux").recorded_on == "x86_64:Some CPU:abc"
    )
    write_updated_manifest(path, "llvm-cpu-host", [failing], host="x86_64:Other:def")
    assert path.read_text().count("# recorded on:") == 1 and recorded_on(path) == "x86_64:Other:def"
    result = run_conformance(
        "--collect-only",
        "--target",
        "llvm-cpu-host",
        "--expectations-dir",
        str(tmp_path),
        "-k",
        "add_f32",
        timeout=300,
    )
    result.stdout.fnmatch_lines(
        ["*the llvm-cpu-host manifest was recorded on x86_64:Other:def; this host is*"]
    )
