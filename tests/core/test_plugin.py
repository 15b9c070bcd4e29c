"""End to end: `pytest conformance` with manifests, reports and bad options."""

import json
import os
import subprocess
import sys

import pytest

from .conftest import ROOT
from .test_stablehlo_checks import CUSTOM_CALL

SELECT = ["-k", "stablehlo-ext or seed_cos_sin"]


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus with space"
    root.mkdir()
    (root / "ok.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "6.0"))
    (root / "wrong.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "7.0"))
    return root


def run_pytest(*args, cwd=ROOT):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/test_stablehlo.py", "-p", "no:cacheprovider", *args],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_unlisted_failure_fails_and_listed_one_is_xfail(tmp_path, corpus, store):
    manifests = tmp_path / "exp"
    manifests.mkdir()
    report = tmp_path / "results.json"
    base = ["--stablehlo-dir", str(corpus), "--store-dir", str(store), "--expectations-dir", str(manifests), *SELECT]
    code, out = run_pytest(*base, "--report-json", str(report))
    assert code == 1, out
    assert "unexpected fail-numerics: stablehlo-ext/wrong" in out
    data = json.loads(report.read_text())
    verdicts = {o["case_id"]: o["verdict"] for o in data["outcomes"]}
    assert verdicts == {"stablehlo-ext/ok": "pass", "stablehlo-ext/wrong": "fail", "stablehlo/seed_cos_sin": "pass"}
    assert data["metadata"]["iree_compiler"] and data["metadata"]["targets"] == ["llvm-cpu"]

    code, out = run_pytest(*base, "--update-expectations")
    assert "updated" in out
    manifest = (manifests / "llvm-cpu.toml").read_text()
    assert '"stablehlo-ext/wrong" = { stage = "fail-numerics"' in manifest and "stablehlo-ext/ok" not in manifest

    code, out = run_pytest(*base, "--report-json", str(report))
    assert code == 0, out
    assert "1 xfailed" in out
    verdicts = {o["case_id"]: o["verdict"] for o in json.loads(report.read_text())["outcomes"]}
    assert verdicts["stablehlo-ext/wrong"] == "xfail"

    md = subprocess.run([sys.executable, "-m", "iree_conformance.cli", "report", str(report), "--no-step-summary"],
                        capture_output=True, text=True, check=True).stdout
    assert "| stablehlo | llvm-cpu | 2 | 1 | 0 | 0 | 0 | 0 | 3 |" in md


def test_listed_case_that_passes_is_a_strict_xpass(tmp_path, corpus, store):
    manifests = tmp_path / "exp"
    manifests.mkdir()
    (manifests / "llvm-cpu.toml").write_text(
        '[xfail]\n"stablehlo-ext/ok" = { stage = "fail-compile", reason = "was broken" }\n'
        '"stablehlo-ext/wrong" = { stage = "fail-numerics", reason = "wrong on purpose" }\n'
    )
    code, out = run_pytest("--stablehlo-dir", str(corpus), "--store-dir", str(store), "--expectations-dir", str(manifests), *SELECT)
    assert code == 1
    assert "XPASS(strict): stablehlo-ext/ok now passes" in out and "llvm-cpu.toml:2" in out


def test_unknown_target_lists_known_ones():
    code, out = run_pytest("--target", "tpu-9000", "--collect-only")
    assert code == 4
    assert "unknown target 'tpu-9000'" in out and "llvm-cpu" in out and "vmvx" in out


def test_broken_manifest_is_a_usage_error(tmp_path):
    (tmp_path / "llvm-cpu.toml").write_text('[xfail]\n"a" = { stage = "nope", reason = "x" }\n')
    code, out = run_pytest("--expectations-dir", str(tmp_path), "--collect-only")
    assert code == 4
    assert "llvm-cpu.toml:2" in out and "stage 'nope'" in out


def test_unavailable_target_is_skipped_with_the_missing_driver(store):
    code, out = run_pytest("--target", "rocm", "--store-dir", str(store), "-k", "seed_cos_sin", "-rs")
    assert code == 0, out
    assert "HAL driver 'hip'" in out and "1 skipped" in out


def test_shards_partition_the_cases(tmp_path):
    ids = []
    for i in (1, 2, 3):
        code, out = run_pytest("--collect-only", "-q", "--shard", f"{i}/3")
        assert code == 0, out
        ids.append({line for line in out.splitlines() if "::test_stablehlo[" in line})
    assert all(ids) and not (ids[0] & ids[1]) and not (ids[1] & ids[2])
    code, out = run_pytest("--collect-only", "-q")
    assert ids[0] | ids[1] | ids[2] == {line for line in out.splitlines() if "::test_stablehlo[" in line}


@pytest.mark.parametrize("value", ["compile=nan", "compile=0", "compile=-1", "compile=inf", "link=5"])
def test_bad_stage_timeout_is_a_usage_error(value):
    code, out = run_pytest("--stage-timeout", value, "--collect-only")
    assert code == 4 and "--stage-timeout" in out


def test_compile_only_cannot_update_expectations():
    code, out = run_pytest("--compile-only", "--update-expectations", "--collect-only")
    assert code == 4 and "needs a full run" in out


ZOO_ENTRY = {
    "model": "MNIST-12",
    "model_path": "validated/vision/classification/mnist/model/mnist-12.onnx",
    "onnx_version": "1.9",
    "opset_version": 12,
    "metadata": {
        "model_sha": "0" * 64,
        "model_bytes": 26143,
        "tags": ["vision"],
        "io_ports": {"inputs": [{"name": "Input3", "shape": [1, 1, 28, 28], "type": "tensor(float)"}],
                     "outputs": [{"name": "Plus214_Output_0", "shape": [1, 10], "type": "tensor(float)"}]},
    },
}


def test_offline_zoo_models_are_skipped_with_reason_offline(tmp_path):
    manifest = tmp_path / "ONNX_HUB_MANIFEST.json"
    manifest.write_text(json.dumps([ZOO_ENTRY]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/test_onnx_models.py", "-p", "no:cacheprovider", "-rs",
         "--zoo-manifest", str(manifest), "--offline", "-k", "onnx-zoo", "--report-json", str(tmp_path / "r.json")],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "IREE_CONFORMANCE_ZOO_CACHE": str(tmp_path / "zoo")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (outcome,) = json.loads((tmp_path / "r.json").read_text())["outcomes"]
    assert outcome["case_id"] == "onnx-zoo/mnist-12" and outcome["verdict"] == "skip" and outcome["reason"] == "offline"
