"""``--repro-dir`` in a run: nothing is made or run for a green case; an expected failure
gets a folder only with ``--repro-expected``, and its note says whether the verification
run came from the store (plugin_hook.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iree_conformance.common.store import ArtifactStore
from iree_conformance.common.vocabulary import Stage, Status, Verdict
from iree_conformance.expectations.lookup import Expectations
from iree_conformance.model.outcome import Outcome
from iree_conformance.repro import make, plugin_hook
from iree_conformance.suites.run_options import RunOptions


@dataclasses.dataclass
class _Target:
    name: str = "llvm-cpu"


@dataclasses.dataclass
class _Case:
    case_id: str = "onnx-ops/test_x"


def _outcome(status: Status, verdict: Verdict, stage: Stage = Stage.COMPILE) -> Outcome:
    return Outcome(
        case_id="onnx-ops/test_x",
        suite="onnx_ops",
        target="llvm-cpu",
        stage=stage,
        status=status,
        verdict=verdict,
        diagnostics=["error: failed to legalize operation 'torch.operator'"],
    )


@pytest.fixture
def made(monkeypatch) -> list[str]:
    """The case ids make.make_for_case was asked for (it returns a verified record, from the store)."""
    calls: list[str] = []

    def fake_make(case, target, outcome, folder, *args, **kwargs):
        calls.append(case.case_id)
        return {"reproduced": True, "verification": {"why": "same line", "from_store": True}}

    monkeypatch.setattr(make, "make_for_case", fake_make)
    return calls


def _write(outcome: Outcome, tmp_path: Path, expected_too: bool) -> dict | None:
    options = RunOptions(repro_dir=tmp_path / "repros", repro_expected=expected_too)
    return plugin_hook.write_for_run(
        _Case(),  # type: ignore[arg-type]
        _Target(),  # type: ignore[arg-type]
        outcome,
        Expectations(target="llvm-cpu"),
        ArtifactStore(tmp_path / "store"),
        tmp_path,
        options,
    )


def test_a_green_case_gets_nothing(tmp_path, made):
    for verdict in (Verdict.PASS, Verdict.FLAKY):
        assert _write(_outcome(Status.PASS, verdict), tmp_path, expected_too=True) is None
    assert made == [] and not (tmp_path / "repros").exists()


def test_an_expected_failure_gets_a_folder_only_with_repro_expected(tmp_path, made):
    xfail = _outcome(Status.FAIL, Verdict.XFAIL)
    assert _write(xfail, tmp_path, expected_too=False) is None and made == []
    note = _write(xfail, tmp_path, expected_too=True)
    assert made == ["onnx-ops/test_x"]
    assert note is not None and note["reproduced"] is True and note["from_store"] is True
    assert note["folder"].endswith(str(Path("llvm-cpu") / "onnx-ops" / "test_x"))
