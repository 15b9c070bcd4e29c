"""Bundles: compile-only here, run-bundle later, same Outcomes as a normal run."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from iree_conformance.bundles.bundle import BundleError, run_bundle
from iree_conformance.engine import benchmark
from tests.support.core_helpers import run_conformance_pytest

from .test_stablehlo_checks import CUSTOM_CALL

SELECT = ["-k", "stablehlo-ext or seed_ or reduce"]


def pytest_run(*args):
    return run_conformance_pytest(*args)


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
    # The line a normal run records; the path as the bundle records it: relative to the
    # checkout, or (this corpus is outside it) the file's name, never the machine's folders.
    assert wrong["info"]["source"]["line"] == normal["info"]["source"]["line"]
    assert normal["info"]["source"]["path"] == str(made / "corpus" / "wrong.mlir")
    assert wrong["info"]["source"]["file"] == "wrong.mlir" and "path" not in wrong["info"]["source"]
    assert wrong["info"]["manifest"] == {"path": str(made / "b" / "manifest.json"), "line": 2}
    # An xfail is expected: no annotation; nothing unexpected in this bundle.
    assert "::error" not in capsys.readouterr().out


def test_run_bundle_cuts_a_huge_diagnostic_and_keeps_it_in_a_file(made, monkeypatch, tmp_path):
    """As a suite run does: no diagnostic line over 1 KB reaches the results."""
    from iree_conformance.bundles import bundle

    real_after_run = bundle.after_run

    def noisy(outcome, judging):
        real_after_run(outcome, judging)
        outcome.diagnostics = ["error: 'onnx.Huge' op " + "attribute " * 20_000]

    monkeypatch.setattr(bundle, "after_run", noisy)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    run_bundle(made / "b", "local-task", made / "capped.json")
    outcomes = json.loads((made / "capped.json").read_text())["outcomes"]
    assert outcomes and all(len(d) <= 1024 for o in outcomes for d in o["diagnostics"])
    kept = {o["info"]["diagnostics_file"] for o in outcomes}
    assert len(kept) == 1 and "attribute " * 20_000 in Path(kept.pop()).read_text()


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
    # The figures the suite writes, raw samples included, so that `compare` can test them.
    for o in timed:
        bench = o["metrics"]["benchmark"]
        assert len(bench["iree"]["samples_s"]) >= 3 and bench["iree"]["summary"]["median_s"] > 0
        assert bench["reference_missing"] == benchmark.BUNDLE_MISSING


def copy_bundle(made, tmp_path):
    import shutil

    return shutil.copytree(made / "b", tmp_path / "copy")


def rewrite_manifest(b, manifest):
    """Edits the manifest and writes its digest again, as someone who knows the format
    can: what is checked beyond the digest must still hold."""
    from iree_conformance.bundles.manifest_check import write_digest

    data = json.dumps(manifest).encode()
    (b / "manifest.json").write_bytes(data)
    write_digest(b, data)


def run_bundle_cli(b, tmp_path):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "run-bundle",
            str(b),
            "--driver",
            "local-task",
            "--report-json",
            str(tmp_path / "cli.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


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
    rewrite_manifest(b, manifest)
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
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": BUNDLE_SCHEMA, "cases": []}))
    with pytest.raises(BundleError, match=r"manifest.json.sha256 is missing"):
        load_manifest(tmp_path)


def test_a_tampered_manifest_is_refused_with_exit_5(made, tmp_path):
    """Widening a tolerance (or dropping an expectation) after the bundle was written
    turns a failure into a pass: the manifest's digest refuses the edit."""
    b = copy_bundle(made, tmp_path)
    manifest = json.loads((b / "manifest.json").read_text())
    for record in manifest["cases"]:
        record.pop("expected", None)
        record["tolerances"] = [{"atol": 1e9, "rtol": 1e9} for _ in record["tolerances"]]
    (b / "manifest.json").write_text(json.dumps(manifest, indent=1))
    proc = run_bundle_cli(b, tmp_path)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "does not match its digest in manifest.json.sha256" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "cli.json").exists()


def _outside(tmp_path):
    """A file outside the bundle, with its sha256, that a hostile manifest names."""
    import hashlib

    outside = tmp_path / "outside" / "outside.npz"
    outside.parent.mkdir()
    outside.write_bytes(b"not the bundle's")
    return outside, hashlib.sha256(outside.read_bytes()).hexdigest()


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink", "module-dotdot"])
def test_a_bundle_never_reads_outside_its_folder(made, tmp_path, how, monkeypatch):
    b = copy_bundle(made, tmp_path)
    outside, digest = _outside(tmp_path)
    manifest = json.loads((b / "manifest.json").read_text())
    record = manifest["cases"][0]
    if how == "dotdot":
        record["data"], record["data_sha256"] = "../outside/outside.npz", digest
    elif how == "absolute":
        record["data"], record["data_sha256"] = str(outside), digest
    elif how == "symlink":
        (b / "data" / "link.npz").symlink_to(outside)
        record["data"], record["data_sha256"] = "data/link.npz", digest
    else:
        record["module"], record["module_sha256"] = "modules/../../outside/outside.npz", digest
    rewrite_manifest(b, manifest)
    opened = []
    real_read_bytes = type(outside).read_bytes

    def spy(self):
        opened.append(str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(type(outside), "read_bytes", spy)
    with pytest.raises(BundleError, match="not a path inside the bundle|outside the bundle"):
        run_bundle(b, "local-task", tmp_path / "r.json")
    assert not [p for p in opened if "outside" in p], opened
    assert not (tmp_path / "r.json").exists()


def test_a_symlink_inside_the_bundle_is_followed(made, tmp_path):
    b = copy_bundle(made, tmp_path)
    manifest = json.loads((b / "manifest.json").read_text())
    record = manifest["cases"][0]
    (b / "data" / "alias.npz").symlink_to(b / record["data"])
    record["data"] = "data/alias.npz"
    rewrite_manifest(b, manifest)
    assert run_bundle(b, "local-task", tmp_path / "r.json").get("fail", 0) == 0


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r.pop("module"), "has no 'module'"),
        (lambda r: r.update(module=7), "'module' is int, not str"),
        (lambda r: r.update(input_sets="1"), "'input_sets' is str, not int"),
        (lambda r: r.update(tolerances=[{"tol": 1}]), "'tolerances' must hold"),
        (lambda r: r.update(data_sha256="x"), "'data_sha256' is not a sha256"),
        (lambda r: r.update(expected={"reason": "r"}), "'expected' needs a 'stage'"),
        (lambda r: r.update(case_id="a\x1b]0;owned\x07"), "'case_id' is empty or holds control"),
    ],
)
def test_a_malformed_record_is_a_bundle_error(made, tmp_path, edit, message):
    b = copy_bundle(made, tmp_path)
    manifest = json.loads((b / "manifest.json").read_text())
    edit(manifest["cases"][0])
    rewrite_manifest(b, manifest)
    with pytest.raises(BundleError, match=f"manifest.json: case 1 .*{message}"):
        run_bundle(b, "local-task", tmp_path / "r.json")


def test_a_malformed_record_exits_5_in_one_line(made, tmp_path):
    b = copy_bundle(made, tmp_path)
    manifest = json.loads((b / "manifest.json").read_text())
    del manifest["cases"][0]["module"]
    rewrite_manifest(b, manifest)
    proc = run_bundle_cli(b, tmp_path)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_bundle_names_no_folder_of_the_machine_that_made_it(made):
    text = (made / "b" / "manifest.json").read_text()
    assert str(made) not in text
    for record in json.loads(text)["cases"]:
        source = record["source"]
        if record["case_id"].startswith("stablehlo-ext/"):  # a corpus outside the checkout
            assert "path" not in source and source["file"].endswith(".mlir"), source
        else:  # the checkout's own corpus
            assert source["path"].startswith("conformance/"), source


def test_a_source_inside_the_checkout_is_recorded_relative_to_it(tmp_path, monkeypatch):
    from iree_conformance.bundles.bundle import _portable_source

    monkeypatch.chdir(tmp_path)
    inside = tmp_path / "conformance" / "stablehlo" / "cases" / "abs.mlir"
    assert _portable_source({"path": str(inside), "line": 3}) == {
        "path": "conformance/stablehlo/cases/abs.mlir",
        "line": 3,
    }
