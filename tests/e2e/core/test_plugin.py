"""End to end: `pytest conformance` with manifests, reports and bad options (through pytester)."""

import json
import subprocess
import sys

import pytest

from iree_conformance.common import errors
from tests.support.core_helpers import output

from .test_stablehlo_checks import CUSTOM_CALL

SELECT = ["-k", "stablehlo-ext or seed_cos_sin"]
USAGE_ERROR = pytest.ExitCode.USAGE_ERROR


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus with space"
    root.mkdir()
    (root / "ok.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "6.0"))
    (root / "wrong.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "7.0"))
    return root


def test_unlisted_failure_fails_and_listed_one_is_xfail(tmp_path, corpus, store, run_conformance):
    manifests = tmp_path / "exp"
    manifests.mkdir()
    report = tmp_path / "results.json"
    base = [
        "--stablehlo-dir",
        str(corpus),
        "--store-dir",
        str(store),
        "--expectations-dir",
        str(manifests),
        *SELECT,
    ]
    result = run_conformance(*base, "--report-json", str(report))
    result.assert_outcomes(passed=2, failed=1)
    assert "unexpected fail-numerics: stablehlo-ext/wrong" in result.stdout.str()
    data = json.loads(report.read_text())
    verdicts = {o["case_id"]: o["verdict"] for o in data["outcomes"]}
    assert verdicts == {
        "stablehlo-ext/ok": "pass",
        "stablehlo-ext/wrong": "fail",
        "stablehlo/seed_cos_sin": "pass",
    }
    assert data["metadata"]["iree_compiler"] and data["metadata"]["targets"] == ["llvm-cpu"]

    result = run_conformance(*base, "--update-expectations")
    assert "iree-conformance: updated" in result.stdout.str(), output(result)
    manifest = (manifests / "llvm-cpu.toml").read_text()
    assert (
        '"stablehlo-ext/wrong" = { expect = "fail-numerics"' in manifest
        and "stablehlo-ext/ok" not in manifest
    )

    result = run_conformance(*base, "--report-json", str(report), "-rx")
    assert result.ret == 0, output(result)
    result.assert_outcomes(passed=2, xfailed=1)
    # the expected failure's reason, as pytest.xfail() would show it (no traceback formatted)
    xfail_lines = [line for line in result.stdout.lines if line.startswith("XFAIL")]
    assert len(xfail_lines) == 1 and "stablehlo-ext/wrong" in xfail_lines[0], output(result)
    assert "fail-numerics" in xfail_lines[0], xfail_lines
    verdicts = {o["case_id"]: o["verdict"] for o in json.loads(report.read_text())["outcomes"]}
    assert verdicts["stablehlo-ext/wrong"] == "xfail"

    md = subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "report",
            str(report),
            "--no-step-summary",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| stablehlo | llvm-cpu | 2 | 1 | 0 | 0 | 0 | 0 | 3 |" in md


def test_listed_case_that_passes_is_a_strict_xpass(tmp_path, corpus, store, run_conformance):
    manifests = tmp_path / "exp"
    manifests.mkdir()
    (manifests / "llvm-cpu.toml").write_text(
        '[xfail]\n"stablehlo-ext/ok" = { stage = "fail-compile", reason = "was broken" }\n'
        '"stablehlo-ext/wrong" = { stage = "fail-numerics", reason = "wrong on purpose" }\n'
    )
    result = run_conformance(
        "--stablehlo-dir",
        str(corpus),
        "--store-dir",
        str(store),
        "--expectations-dir",
        str(manifests),
        *SELECT,
    )
    result.assert_outcomes(passed=1, failed=1, xfailed=1)  # a strict XPASS counts as failed
    out = result.stdout.str()
    assert "XPASS(strict): stablehlo-ext/ok now passes" in out and "llvm-cpu.toml:2" in out


def test_unknown_target_lists_known_ones(run_conformance):
    result = run_conformance("--target", "tpu-9000", "--collect-only")
    assert result.ret == errors.EXIT_CONFIGURATION  # the one table's 2, not pytest's 4
    out = output(result)
    assert "unknown target 'tpu-9000'" in out and "llvm-cpu" in out and "vmvx" in out


def test_broken_manifest_stops_with_the_manifest_status(tmp_path, run_conformance):
    (tmp_path / "llvm-cpu.toml").write_text('[xfail]\n"a" = { stage = "nope", reason = "x" }\n')
    result = run_conformance("--expectations-dir", str(tmp_path), "--collect-only")
    assert result.ret == errors.EXIT_MANIFEST  # the one table's 3, not pytest's 4
    out = output(result)
    assert "llvm-cpu.toml:2" in out and "stage 'nope'" in out


def test_unavailable_target_is_skipped_with_the_missing_driver(store, run_conformance):
    result = run_conformance(
        "--target", "rocm", "--store-dir", str(store), "-k", "seed_cos_sin", "-rs"
    )
    result.assert_outcomes(skipped=1)
    assert "HAL driver 'hip'" in result.stdout.str()


def collected(result) -> set[str]:
    return {line for line in result.outlines if "::test_conformance[" in line}


def test_shards_partition_the_cases(run_conformance):
    ids = []
    for i in (1, 2, 3):
        result = run_conformance("--collect-only", "-q", "--shard", f"{i}/3")
        assert result.ret == 0, output(result)
        ids.append(collected(result))
    assert all(ids) and not (ids[0] & ids[1]) and not (ids[1] & ids[2])
    assert ids[0] | ids[1] | ids[2] == collected(run_conformance("--collect-only", "-q"))


def test_cases_file_selects_the_listed_cases(tmp_path, run_conformance):
    listed = tmp_path / "cases.txt"
    listed.write_text(
        "# two bundled cases\nstablehlo/seed_cos_sin\nstablehlo/add_f32  # and a comment\nstablehlo/no_such_case\n"
    )
    result = run_conformance(
        "--collect-only",
        "-q",
        "--cases-file",
        str(listed),
        "--target",
        "llvm-cpu",
        "--target",
        "vmvx",
    )
    assert result.ret == 0, output(result)
    assert {line.split("[", 1)[1] for line in collected(result)} == {
        f"{t}:stablehlo/{c}]" for t in ("llvm-cpu", "vmvx") for c in ("seed_cos_sin", "add_f32")
    }


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--stage-timeout", "compile=nan", "finite"),
        ("--stage-timeout", "compile=0", "above 0"),
        ("--stage-timeout", "compile=inf", "finite"),
        ("--stage-timeout", "link=5", "stage must be one of"),
        ("--shard", "3", "expected I/N"),
        ("--retries", "-1", "0 or more"),
        ("--timing-runs", "many", "whole number"),
        ("--onnx-ops-sample", "0", "1 or more"),
        ("--cases-file", "no-such-file.txt", "cannot read"),
    ],
)
def test_bad_option_value_is_a_usage_error_naming_the_option(
    run_conformance, option, value, message
):
    result = run_conformance(option, value, "--collect-only")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument {option}: *{message}*"])


def test_compile_only_cannot_update_expectations(run_conformance):
    result = run_conformance("--compile-only", "--update-expectations", "--collect-only")
    assert result.ret == USAGE_ERROR and "needs a full run" in output(result)


ZOO_ENTRY = {
    "model": "MNIST-12",
    "model_path": "validated/vision/classification/mnist/model/mnist-12.onnx",
    "onnx_version": "1.9",
    "opset_version": 12,
    "metadata": {
        "model_sha": "0" * 64,
        "model_bytes": 26143,
        "tags": ["vision"],
        "io_ports": {
            "inputs": [{"name": "Input3", "shape": [1, 1, 28, 28], "type": "tensor(float)"}],
            "outputs": [{"name": "Plus214_Output_0", "shape": [1, 10], "type": "tensor(float)"}],
        },
    },
}


def test_offline_zoo_models_are_skipped_with_reason_offline(tmp_path, monkeypatch, run_conformance):
    manifest = tmp_path / "ONNX_HUB_MANIFEST.json"
    manifest.write_text(json.dumps([ZOO_ENTRY]))
    monkeypatch.setenv("IREE_CONFORMANCE_ZOO_CACHE", str(tmp_path / "zoo"))
    result = run_conformance(
        "-rs",
        "--zoo-manifest",
        str(manifest),
        "--offline",
        "-k",
        "onnx-zoo",
        "--report-json",
        str(tmp_path / "r.json"),
        suite="onnx_models",
    )
    result.assert_outcomes(skipped=1)
    (outcome,) = json.loads((tmp_path / "r.json").read_text())["outcomes"]
    assert (
        outcome["case_id"] == "onnx-zoo/mnist-12"
        and outcome["verdict"] == "skip"
        and outcome["reason"] == "offline"
    )


def test_xdist_runs_each_batch_on_one_worker(tmp_path, run_conformance):
    """With -n 2 (the plugin switches --dist load to loadgroup), a batch's cases go to one
    worker: its node ids carry the "@batch-..." group suffix in the workers too."""
    cases = tmp_path / "cases.txt"
    cases.write_text(
        "stablehlo/convert_f32_f16\nstablehlo/convert_f32_i32\nstablehlo/dot_general_matmul_f32\nstablehlo/dynamic_update_slice\nstablehlo/reduce_max_f32\n"
    )
    result = run_conformance(
        "-n", "2", "-v", "--store-dir", str(tmp_path / "store"), "--cases-file", str(cases)
    )
    result.assert_outcomes(passed=5)
    workers: dict[str, set[str]] = {}
    for line in result.stdout.lines:
        if line.startswith("[gw") and "PASSED" in line:
            assert "@batch-" in line, line
            workers.setdefault(line.rsplit("@", 1)[1].strip(), set()).add(line.split("]", 1)[0])
    assert workers and all(len(w) == 1 for w in workers.values()), workers
