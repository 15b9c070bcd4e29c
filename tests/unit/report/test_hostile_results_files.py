"""Results files from a fork or a broken tool (issue 47 items 8-10, issue 46): deep
nesting, integers past Python's digit limit, wrong types, NaN and non-positive samples.
Each is one error line naming the file and the field, exit 2 (8 in ci/), never a
traceback, in every command that reads results."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from ci._common import CIError
from ci.cli import main as ci_main
from iree_conformance.cli.main import main
from iree_conformance.model.results import ResultsError, load_results

GOOD = {
    "case_id": "onnx-ops/test_abs",
    "suite": "onnx_ops",
    "target": "llvm-cpu",
    "status": "pass",
    "verdict": "pass",
    "stage": "compare",
    "duration": 0.5,
}


def document(**outcome_fields) -> dict:
    return {"schema": 1, "metadata": {"os": "linux"}, "outcomes": [{**GOOD, **outcome_fields}]}


def bench(samples) -> dict:
    return {"benchmark": {"iree": {"samples_s": samples}}}


DEEP = '{"schema": 1, "outcomes": [], "metadata": ' + "[" * 200_000 + "]" * 200_000 + "}"
HUGE = '{"schema": 1, "outcomes": [], "metadata": {"n": ' + "9" * 5000 + "}}"
# name -> (file text, words of the one error)
HOSTILE = {
    "deep": (DEEP, "nested too deeply"),
    "huge-int": (HUGE, "not readable JSON"),
    "metrics-text": (json.dumps(document(metrics="fast")), "metrics must be an object, got text"),
    "metadata-list": (
        json.dumps({**document(), "metadata": ["linux"]}),
        "metadata must be an object, got a list",
    ),
    "duration-text": (json.dumps(document(duration="1s")), "duration must be a number"),
    "info-list": (json.dumps(document(info=[1])), "info must be an object, got a list"),
    "nan-samples": (
        json.dumps(document(metrics=bench([float("nan"), 1.0]))),
        "samples_s must be a list of times above 0 s",
    ),
    "zero-median": (
        json.dumps(document(metrics=bench([0.0, 0.0, -1.0]))),
        "samples_s must be a list of times above 0 s",
    ),
    # issue 58 item 14: compile statistics that compare read as "no change" or took
    "module-bytes-negative": (
        json.dumps(document(metrics={"compile_stats": {"module_bytes": -1e30}})),
        "compile_stats.module_bytes must be a whole number of 0 or more",
    ),
    "module-bytes-text": (
        json.dumps(document(metrics={"compile_stats": {"module_bytes": "10 kB"}})),
        "compile_stats.module_bytes must be a whole number of 0 or more",
    ),
    "module-bytes-infinity": (
        json.dumps(document(metrics={"compile_stats": {"module_bytes": float("inf")}})),
        "compile_stats.module_bytes must be a whole number of 0 or more",
    ),
}


@pytest.fixture(params=sorted(HOSTILE))
def hostile(request, tmp_path: Path) -> tuple[Path, str]:
    text, words = HOSTILE[request.param]
    path = tmp_path / f"{request.param}.json"
    path.write_text(text, encoding="utf-8")
    return path, words


def test_the_loader_names_the_field(hostile) -> None:
    path, words = hostile
    with pytest.raises(ResultsError, match=words) as caught:
        load_results(path)
    assert str(caught.value).startswith(str(path))


@pytest.mark.parametrize(
    "command",
    [
        ["report", "{f}"],
        ["compare", "{f}", "{f}"],
        ["compare", "{f}", "{f}", "--markdown"],
        ["update-expectations", "{f}", "--expectations-dir", "{tmp}"],
        ["history", "{f}", "--state-out", "{tmp}/state.json"],
    ],
    ids=lambda c: " ".join(c[:1] + c[-1:]),
)
def test_every_reader_gives_one_error_line_and_exit_2(hostile, command, tmp_path, capsys):
    path, words = hostile
    argv = [a.format(f=path, tmp=tmp_path) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    "command",
    [
        ["merge-results", "{f}", "--output", "{tmp}/m.json"],
        ["diff-results", "--current", "{f}", "--baseline", "{f}"],
    ],
    ids=lambda c: c[0],
)
def test_ci_readers_give_one_error_line(hostile, command, tmp_path, capsys) -> None:
    path, words = hostile
    argv = [a.format(f=path, tmp=tmp_path) for a in command]
    assert ci_main(argv) in (2, 8)
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err


def test_onnx_backend_compare_with_a_deep_file_is_a_configuration_error(tmp_path) -> None:
    from iree_conformance.common.errors import ConfigurationError
    from iree_conformance.onnx_backend.runner import suite_verdicts

    path = tmp_path / "deep.json"
    path.write_text(DEEP, encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not a --report-json results file"):
        suite_verdicts(path)


@pytest.mark.parametrize("text", [DEEP, HUGE], ids=["deep", "huge-int"])
def test_pr_comment_a_deep_or_huge_diff_json_is_one_ci_error(text: str) -> None:
    from ci.pr_comment import read_members

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("diff.json", text)
    with pytest.raises(CIError, match=r"diff.json: (nested too deeply|not readable JSON)"):
        read_members(buffer.getvalue())


@pytest.mark.parametrize("command", [["report", "{f}"], ["compare", "{f}", "{f}"]])
def test_a_device_or_fifo_is_refused_unread(command, tmp_path, capsys) -> None:
    """``report /dev/zero`` read until the kernel killed it; a FIFO hung."""
    import os

    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        assert main([a.format(f=path) for a in command]) == 2
        err = capsys.readouterr().err
        assert "not a regular file" in err and len(err.strip().splitlines()) == 1, err


def test_a_results_file_past_the_size_cap_is_refused(tmp_path, monkeypatch) -> None:
    from iree_conformance.model import results

    path = tmp_path / "big.json"
    path.write_text(json.dumps(document()), encoding="utf-8")
    monkeypatch.setattr(results, "MAX_RESULTS_BYTES", 64)
    with pytest.raises(ResultsError, match="more than the 64 a results file may hold"):
        results.load_results(path)
