"""``iree-conformance repro`` on bundled cases that compile in a second: the folder it
writes, verified with IREE's own tools in a clean subprocess, and each bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
# IREE's tools: beside this Python (its venv's bin), else on PATH.
_HERE = Path(sys.executable).parent
TOOLS = (
    _HERE
    if (_HERE / "iree-compile").exists()
    else Path(shutil.which("iree-compile") or _HERE).parent
)
needs_tools = pytest.mark.skipif(
    not (TOOLS / "iree-compile").exists() or not (TOOLS / "iree-run-module").exists(),
    reason="IREE's tools (iree-base-compiler, iree-base-runtime) are neither beside Python nor on PATH",
)


def repro(tmp_path: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PATH": path if path is not None else f"{TOOLS}{os.pathsep}{os.environ.get('PATH', '')}",
        # no stored versions run answers "did it work before" unless a test makes one
        "IREE_CONFORMANCE_VERSION_STORES": str(tmp_path / "version-stores"),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "repro",
            *args,
            "--targets",
            str(REPO / "conformance" / "targets.toml"),
            "--store-dir",
            str(tmp_path / "store"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )


@needs_tools
def test_a_numerics_failure_is_written_and_reproduced_by_ireess_tools(tmp_path):
    proc = repro(tmp_path, "stablehlo/sort_key_value_stable", "-o", "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "out"
    record = json.loads((out / "repro.json").read_text())
    assert record["kind"] == "fail-numerics" and record["reproduced"] is True
    assert any(line.startswith("[FAILED] result[1]") for line in record["verification"]["output"])
    flags = (out / "run.flags").read_text().splitlines()
    assert "--function=main" in flags and "--expected_output=@expected_1.npy" in flags
    assert np.load(out / "input_0.npy").shape == (12,)
    assert "--iree-input-type=stablehlo" in (out / "compile.flags").read_text()
    # By hand: the script itself, with only the IREE tools on PATH, shows the mismatch.
    ran = subprocess.run(
        ["/bin/sh", str(out / "repro.sh")],
        env={"PATH": str(TOOLS)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 1 and "[FAILED] result[1]: element at index 0 (3.5)" in ran.stdout


@needs_tools
def test_a_compile_failure_matches_its_known_issue(tmp_path):
    proc = repro(tmp_path, "jax/linalg/cholesky", "-o", "out")
    if "skip" in proc.stdout and "jax" in proc.stdout:
        pytest.skip("JAX is not installed")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "matches iree-org/iree#12410" in proc.stdout
    assert "Matches iree-org/iree#12410" in (tmp_path / "out" / "ISSUE.md").read_text()
    assert (
        json.loads((tmp_path / "out" / "repro.json").read_text())["verification"]["stage"]
        == "compile"
    )


@needs_tools
def test_sources_of_a_passing_case_are_dumped(tmp_path):
    proc = repro(tmp_path, "stablehlo/add_f32", "--sources", "-o", "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dump = tmp_path / "out" / "dump"
    assert list((dump / "sources").glob("*.mlir")), proc.stdout
    assert list((dump / "phases").glob("*.mlir")) and (dump / "benchmarks").is_dir()
    assert not (tmp_path / "out" / "ISSUE.md").exists()


def test_a_passing_case_says_so_and_writes_nothing(tmp_path):
    proc = repro(tmp_path, "stablehlo/add_f32", "-o", "out")
    assert proc.returncode == 0, proc.stderr
    assert "it passes" in proc.stdout and not (tmp_path / "out").exists()


def test_an_unknown_case_names_the_nearest(tmp_path):
    proc = repro(tmp_path, "stablehlo/add_f33")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "unknown case 'stablehlo/add_f33'" in proc.stderr and "stablehlo/add_f32" in proc.stderr


def test_an_unknown_suite_prefix_lists_the_prefixes(tmp_path):
    proc = repro(tmp_path, "nosuch/case")
    assert proc.returncode == 2 and "stablehlo/" in proc.stderr and "onnx-ops/" in proc.stderr


def test_an_existing_folder_is_refused_before_anything_runs(tmp_path):
    (tmp_path / "out").mkdir()
    proc = repro(tmp_path, "stablehlo/sort_key_value_stable", "-o", "out")
    assert proc.returncode == 2 and "exists; pass --force" in proc.stderr
    assert not (tmp_path / "store").exists()  # nothing ran


def test_force_onto_the_working_folder_deletes_nothing_and_runs_nothing(tmp_path):
    (tmp_path / "thesis.tex").write_text("mine")
    proc = repro(tmp_path, "stablehlo/sort_key_value_stable", "-o", ".", "--force")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "is the working folder" in proc.stderr
    assert (tmp_path / "thesis.tex").read_text() == "mine"
    assert not (tmp_path / "store").exists()  # nothing ran


def test_a_case_id_that_would_escape_the_folder_is_refused(tmp_path):
    proc = repro(tmp_path, "stablehlo/../../etc")
    assert proc.returncode == 2 and "would escape" in proc.stderr and "Traceback" not in proc.stderr


def test_tools_missing_from_path_keep_the_folder_and_say_so(tmp_path):
    proc = repro(
        tmp_path, "stablehlo/sort_key_value_stable", "-o", "out", path=str(tmp_path / "empty")
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not on PATH" in proc.stderr and "iree-compile" in proc.stderr
    assert json.loads((tmp_path / "out" / "repro.json").read_text())["reproduced"] is None


def _versions_results(folder: Path, case_id: str) -> Path:
    """A versions run's results folder: the case passed on 3.12.0, failed on 3.13.0."""
    folder.mkdir(parents=True)
    for version, status, revision in (
        ("3.12.0", "pass", "2b05c5db"),
        ("3.13.0", "fail", "89ece87b"),
    ):
        outcome = {
            "case_id": case_id, "suite": "stablehlo", "target": "llvm-cpu", "status": status,
            "stage": "compare", "verdict": status, "diagnostics": [], "duration": 1.0,
        }  # fmt: skip
        meta = {"iree_compiler": version, "iree_revision": revision * 5}
        doc = {"schema": 1, "metadata": meta, "outcomes": [outcome]}
        (folder / f"{version}.json").write_text(json.dumps(doc))
    return folder


@needs_tools
def test_issue_md_says_it_worked_before_from_the_newest_stored_run(tmp_path):
    case = "stablehlo/sort_key_value_stable"
    run = _versions_results(
        tmp_path / "version-stores" / "_runs" / "versions-20261204-010000-1", case
    )
    proc = repro(tmp_path, case, "-o", "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "did it work before: Yes, on IREE 3.12.0: passed on IREE 3.12.0" in proc.stdout
    assert f"(from {run})" in proc.stdout
    issue = (tmp_path / "out" / "ISSUE.md").read_text()
    assert (
        "- Did it work before? Yes, on IREE 3.12.0: passed on IREE 3.12.0 (revision 2b05c5db2b05)"
        in issue
    )
    assert "fail-numerics on IREE 3.13.0" in issue and "compare/2b05c5db" in issue
    record = json.loads((tmp_path / "out" / "repro.json").read_text())
    assert record["context"]["worked_before"]["source"] == run.name
    assert record["verification"]["tools"] == "PATH"  # which tools, not where
    assert str(tmp_path) not in issue and str(tmp_path) not in json.dumps(record)


@needs_tools
def test_a_malformed_versions_result_is_said_and_the_folder_written(tmp_path):
    bad = tmp_path / "versions.json"
    bad.write_text("{oops")
    proc = repro(
        tmp_path, "stablehlo/sort_key_value_stable", "-o", "out", "--versions-result", str(bad)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"did it work before: not known: {bad} is not JSON" in proc.stdout
    assert "Traceback" not in proc.stderr
    issue = (tmp_path / "out" / "ISSUE.md").read_text()
    assert (
        "Did it work before? Not known (run `iree-conformance versions previous installed -- -k sort_key_value_stable`"
        in issue
    )


@needs_tools
def test_repro_sh_reproduces_however_it_is_started(tmp_path):
    """issue 53: ``sh repro.sh`` and ``bash repro.sh`` (no slash in ``$0``) failed at ``cd``."""
    proc = repro(tmp_path, "stablehlo/sort_key_value_stable", "-o", "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "out"
    (tmp_path / "elsewhere").mkdir()
    bash = shutil.which("bash")
    ways = [
        (["sh", "repro.sh"], out),
        (["./repro.sh"], out),
        (["sh", str(out / "repro.sh")], tmp_path / "elsewhere"),
        (["sh", "out/repro.sh"], tmp_path),
    ]
    if bash:
        ways += [([bash, "repro.sh"], out), ([bash, "../out/repro.sh"], tmp_path / "elsewhere")]
    for words, cwd in ways:
        ran = subprocess.run(
            words,
            cwd=cwd,
            env={"PATH": f"{TOOLS}{os.pathsep}/usr/bin{os.pathsep}/bin"},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert ran.returncode == 1, (words, cwd, ran.stdout, ran.stderr)
        assert "[FAILED] result[1]: element at index 0 (3.5)" in ran.stdout, (words, cwd)
    assert "`sh repro.sh`" in (out / "ISSUE.md").read_text()
