"""ISSUE.md's "Did it work before?" (repro/worked_before.py): from a results folder of
``versions``/``bisect``, their ``--json`` files, the newest stored run that holds the case,
and the messages of a result that cannot answer (docs/reproducers.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from iree_conformance.cli import main as cli
from iree_conformance.common.userdirs import VERSION_STORES_ENV
from iree_conformance.repro import issue_text, worked_before, writer
from iree_conformance.repro.spec import ReproSpec

CASE = "onnx-ops/test_dequantizelinear_uint16"
OLD_REV, NEW_REV = "2b05c5dbb2f2" + "0" * 28, "89ece87b8985" + "1" * 28


def outcome(status: str, case: str = CASE, target: str = "llvm-cpu") -> dict:
    return {
        "case_id": case,
        "suite": "onnx_ops",
        "target": target,
        "status": status,
        "stage": "compile" if status != "pass" else "compare",
        "verdict": "pass" if status in ("pass", "skip") else "fail",
        "diagnostics": [] if status == "pass" else ["error: failed to legalize"],
        "duration": 1.0,
    }


def results(path: Path, version: str, revision: str, *outcomes: dict) -> Path:
    meta = {"iree_compiler": version, "iree_runtime": version, "iree_revision": revision}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": 1, "metadata": meta, "outcomes": list(outcomes)}))
    return path


def versions_run(folder: Path, old: str = "pass", new: str = "error") -> Path:
    """What `versions 3.12.0 3.13.0` leaves in its --out folder (and a log beside)."""
    results(folder / "3.12.0.json", "3.12.0", OLD_REV, outcome(old), outcome("pass", "x/other"))
    results(folder / "3.13.0.json", "3.13.0", NEW_REV, outcome(new), outcome("pass", "x/other"))
    (folder / "3.13.0.log").write_text("$ pytest ...\n")
    return folder


def test_a_versions_results_folder_says_it_passed_on_the_older_version(tmp_path):
    found = worked_before.lookup(str(versions_run(tmp_path / "run")), CASE, "llvm-cpu")
    assert found.problem is None and found.source == str(tmp_path / "run")
    assert found.text == (
        "Yes, on IREE 3.12.0: passed on IREE 3.12.0 (revision 2b05c5dbb2f2), "
        "fail-compile on IREE 3.13.0 (revision 89ece87b8985)"
    )
    assert found.link == f"https://github.com/iree-org/iree/compare/{OLD_REV}...{NEW_REV}"
    line = issue_text.worked_before_line(found.record(), CASE)
    assert line.startswith("Did it work before? Yes, on IREE 3.12.0") and found.link in line


def test_failing_in_every_version_is_not_a_yes(tmp_path):
    found = worked_before.lookup(str(versions_run(tmp_path / "r", "error")), CASE, "llvm-cpu")
    assert found.text.startswith("Not on the versions compared: fail-compile on IREE 3.12.0")
    assert found.link is None


def test_the_versions_json_comparison_answers_too(tmp_path, capsys):
    run = versions_run(tmp_path / "run")
    comparison = tmp_path / "versions.json"
    argv = ["versions", "--no-step-summary", "--json", str(comparison), "--results"]
    assert cli.main([*argv, str(run / "3.13.0.json"), str(run / "3.12.0.json")]) == 1
    found = worked_before.lookup(str(comparison), CASE, "llvm-cpu")
    assert found.text.startswith("Yes, on IREE 3.12.0: passed on IREE 3.12.0")
    assert found.source == str(comparison)


def test_a_bisect_json_names_the_last_pass_and_the_first_failure(tmp_path):
    path = tmp_path / "bisect.json"
    found_case = {
        "target": "llvm-cpu",
        "case_id": CASE,
        "old_kind": "pass",
        "new_kind": "fail-compile",
        "last_old": "3.12.0",
        "first_new": "3.13.0",
        "revisions": [OLD_REV, NEW_REV],
        "flaky_at": None,
    }
    path.write_text(
        json.dumps({"candidates": ["3.11.0", "3.12.0", "3.13.0"], "cases": [found_case]})
    )
    found = worked_before.lookup(str(path), CASE, "llvm-cpu")
    assert found.text == (
        "Yes: bisect found the last passed on IREE 3.12.0 (revision 2b05c5dbb2f2), "
        "first fail-compile on IREE 3.13.0 (revision 89ece87b8985)"
    )
    assert found.link and OLD_REV in found.link


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p.write_text("{not json"), "is not JSON"),
        (lambda p: p.write_text('{"a": 1}'), "neither a results file"),
        (lambda p: None, "no such file or folder"),
        (
            lambda p: results(p, "3.13.0", NEW_REV, outcome("error", target="vulkan")),
            f"holds {CASE} for target vulkan, not llvm-cpu",
        ),
        (
            lambda p: results(p, "3.13.0", NEW_REV, outcome("error", "x/y")),
            f"does not hold {CASE}",
        ),
        (lambda p: p.write_text('{"schema": 7, "outcomes": []}'), "unsupported results schema"),
    ],
)
def test_a_result_that_cannot_answer_says_why(tmp_path, make, message):
    path = tmp_path / "given.json"
    make(path)
    found = worked_before.lookup(str(path), CASE, "llvm-cpu")
    assert found.source is None and message in (found.problem or "")
    assert str(path) in (found.problem or "")
    assert (
        found.command
        == "iree-conformance versions previous installed -- -k test_dequantizelinear_uint16"
    )


def test_the_newest_stored_run_that_holds_the_case_answers(tmp_path, monkeypatch):
    monkeypatch.setenv(VERSION_STORES_ENV, str(tmp_path))
    runs = tmp_path / "_runs"
    older = versions_run(runs / "versions-20261201-010000-11")
    newest = runs / "bisect-20261203-010000-12"  # newer, but without the case
    results(newest / "3.13.0.json", "3.13.0", NEW_REV, outcome("error", "x/y"))
    (runs / "versions-20261202-010000-13").mkdir()  # a run that wrote nothing
    found = worked_before.lookup(None, CASE, "llvm-cpu")
    assert found.source == str(older) and found.text.startswith("Yes, on IREE 3.12.0")
    newer = versions_run(runs / "versions-20261204-010000-14", "error")
    os.utime(newer, (0, 0))  # the name's stamp orders the runs, not the time of the folder
    assert worked_before.lookup(None, CASE, "llvm-cpu").source == str(newer)


def test_nothing_stored_is_not_known_with_the_command_that_finds_out(tmp_path, monkeypatch):
    monkeypatch.setenv(VERSION_STORES_ENV, str(tmp_path / "none"))
    found = worked_before.lookup(None, CASE, "llvm-cpu")
    assert found.source is None and found.problem is None
    assert issue_text.worked_before_line(found.record(), CASE) == (
        "Did it work before? Not known (run `iree-conformance versions previous installed "
        "-- -k test_dequantizelinear_uint16` to find out)."
    )


def test_issue_md_and_repro_json_carry_it(tmp_path):
    found = worked_before.lookup(str(versions_run(tmp_path / "run")), CASE, "llvm-cpu")
    spec = ReproSpec(
        case_id=CASE,
        target="llvm-cpu",
        kind="fail-compile",
        stage="compile",
        first_line="error: failed to legalize",
        compile_flags=(),
        device="local-task",
        function="main",
        mlir=b"",
        context={"worked_before": found.record()},
    )
    record = writer.write(spec, tmp_path / "out", {}, verify_it=False)
    text = (tmp_path / "out" / "ISSUE.md").read_text()
    assert "- Did it work before? Yes, on IREE 3.12.0: passed on IREE 3.12.0" in text
    assert record["context"]["worked_before"]["versions"] == [
        {"version": "3.12.0", "observed": "pass", "revision": OLD_REV},
        {"version": "3.13.0", "observed": "fail-compile", "revision": NEW_REV},
    ]


def _deep(path: Path) -> None:
    path.write_text("[" * 300_000)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


@pytest.mark.parametrize(
    "make, why", [(_deep, "nested too deeply"), (_fifo, "is not a regular file")]
)
def test_a_hostile_file_among_the_stored_runs_is_skipped_with_a_line(
    tmp_path, monkeypatch, make, why
):
    """Issue 58, item 3: was a RecursionError (deep) or a hang (a FIFO) in every repro."""
    monkeypatch.setenv(VERSION_STORES_ENV, str(tmp_path))
    runs = tmp_path / "_runs"
    good = versions_run(runs / "versions-20261201-010000-11")
    bad = runs / "versions-20261203-010000-12" / "3.12.0.json"
    bad.parent.mkdir()
    make(bad)
    found = worked_before.lookup(None, CASE, "llvm-cpu")
    assert found.source == str(good) and found.text.startswith("Yes, on IREE 3.12.0")
    assert len(found.skipped) == 1 and str(bad) in found.skipped[0] and why in found.skipped[0]
    make(good / "3.14.0.json")  # in the given folder too: skipped, the rest answers
    found = worked_before.lookup(str(good), CASE, "llvm-cpu")
    assert found.text.startswith("Yes, on IREE 3.12.0") and why in found.skipped[0]
    given = tmp_path / "given.json"
    make(given)
    found = worked_before.lookup(str(given), CASE, "llvm-cpu")
    assert found.source is None and why in (found.problem or "")


def test_a_file_over_the_size_bound_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(worked_before, "MAX_BYTES", 10)
    path = results(tmp_path / "given.json", "3.13.0", NEW_REV, outcome("error"))
    found = worked_before.lookup(str(path), CASE, "llvm-cpu")
    assert "is larger than" in (found.problem or "")
