"""Bundles: compile-only here, run-bundle later, same Outcomes as a normal run."""

import json
import subprocess
import sys

import pytest

from iree_conformance.bundles.bundle import BundleError, run_bundle

from .conftest import run_stablehlo_pytest
from .test_stablehlo_checks import CUSTOM_CALL

SELECT = ["-k", "stablehlo-ext or seed_ or reduce"]


def pytest_run(*args):
    return run_stablehlo_pytest(*args)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bundle")
    corpus = tmp / "corpus"
    corpus.mkdir()
    (corpus / "ok.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "6.0"))
    (corpus / "wrong.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "7.0"))
    exp = tmp / "exp"
    exp.mkdir()
    (exp / "llvm-cpu.toml").write_text(
        '[xfail]\n"stablehlo-ext/wrong" = { stage = "fail-numerics", reason = "wrong on purpose" }\n'
    )
    common = [
        "--stablehlo-dir",
        str(corpus),
        "--expectations-dir",
        str(exp),
        "--store-dir",
        str(tmp / "store"),
        *SELECT,
    ]
    normal = pytest_run(*common, "--report-json", str(tmp / "normal.json"))
    assert normal.returncode == 0, normal.stdout + normal.stderr
    compiled = pytest_run(*common, "--compile-only", "--bundle", str(tmp / "b"), "-n", "2")
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return tmp


def test_round_trip_gives_the_same_outcomes(made):
    counts = run_bundle(made / "b", "local-task", made / "bundle.json")
    normal = {
        o["case_id"]: (o["status"], o["verdict"])
        for o in json.loads((made / "normal.json").read_text())["outcomes"]
    }
    bundled = {
        o["case_id"]: (o["status"], o["verdict"])
        for o in json.loads((made / "bundle.json").read_text())["outcomes"]
    }
    assert bundled == normal
    assert counts.get("xfail") == 1 and not counts.get("fail")
    manifest = json.loads((made / "b" / "manifest.json").read_text())
    assert manifest["iree_compiler"] and manifest["targets"]["llvm-cpu"]["driver"] == "local-task"


def test_run_bundle_records_where_a_failure_is_written(made, monkeypatch, capsys):
    """The failing check op's file and line and the manifest entry's, as a normal run
    records them; on GitHub Actions run-bundle prints them as annotations."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(made))
    run_bundle(made / "b", "local-task", made / "annotated.json")
    outcomes = {
        o["case_id"]: o for o in json.loads((made / "annotated.json").read_text())["outcomes"]
    }
    wrong = outcomes["stablehlo-ext/wrong"]
    normal = {o["case_id"]: o for o in json.loads((made / "normal.json").read_text())["outcomes"]}[
        "stablehlo-ext/wrong"
    ]
    assert wrong["info"]["source"] == normal["info"]["source"]
    assert wrong["info"]["source"]["path"] == str(made / "corpus" / "wrong.mlir")
    assert wrong["info"]["manifest"] == {"path": str(made / "exp" / "llvm-cpu.toml"), "line": 2}
    # An xfail is expected: no annotation; nothing unexpected in this bundle.
    assert "::error" not in capsys.readouterr().out


def test_cli_run_bundle_with_timing(made):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "run-bundle",
            str(made / "b"),
            "--driver",
            "local-sync",
            "--report-json",
            str(made / "cli.json"),
            "--timing-runs",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outcomes = json.loads((made / "cli.json").read_text())["outcomes"]
    timed = [o for o in outcomes if "timing" in o["metrics"]]
    assert timed and all(o["metrics"]["timing"]["iree_median_s"] > 0 for o in timed)


def copy_bundle(made, tmp_path):
    import shutil

    return shutil.copytree(made / "b", tmp_path / "copy")


def test_tampered_module_is_refused(made, tmp_path):
    b = copy_bundle(made, tmp_path)
    module = next((b / "modules").glob("*.vmfb"))
    data = bytearray(module.read_bytes())
    data[len(data) // 2] ^= 0xFF
    module.write_bytes(bytes(data))
    with pytest.raises(BundleError, match="does not match its sha256"):
        run_bundle(b, "local-task", tmp_path / "r.json")


def test_missing_file_is_refused(made, tmp_path):
    b = copy_bundle(made, tmp_path)
    next((b / "data").glob("*.npz")).unlink()
    with pytest.raises(BundleError, match="is missing"):
        run_bundle(b, "local-task", tmp_path / "r.json")


def test_unknown_driver_and_version_mismatch(made, tmp_path):
    with pytest.raises(BundleError, match="unknown HAL driver 'tpu'"):
        run_bundle(made / "b", "tpu", tmp_path / "r.json")
    b = copy_bundle(made, tmp_path)
    manifest = json.loads((b / "manifest.json").read_text())
    manifest["iree_compiler"] = "1.0.0"
    (b / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="compiled with IREE 1.0.0"):
        run_bundle(b, "local-task", tmp_path / "r.json")
    assert run_bundle(b, "local-task", tmp_path / "r.json", force=True).get("fail", 0) == 0


def test_bundle_of_an_older_schema_is_refused(tmp_path):
    from iree_conformance.bundles.bundle import BUNDLE_SCHEMA, load_manifest

    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 1, "cases": [{"entry": "main"}]}))
    with pytest.raises(
        BundleError,
        match=f"bundle schema 1, but this iree-conformance reads schema {BUNDLE_SCHEMA}; rebuild",
    ):
        load_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": BUNDLE_SCHEMA}))
    with pytest.raises(BundleError, match="not a bundle manifest"):
        load_manifest(tmp_path)
