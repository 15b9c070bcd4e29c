"""The vocabulary: str enums that equal their strings, and the target:case key."""

import json

import pytest

from iree_conformance.common import vocabulary
from iree_conformance.common.vocabulary import CaseKey, ExpectationKind, Stage, Status, Verdict
from iree_conformance.model.outcome import Outcome


def test_members_equal_their_strings_everywhere_strings_go():
    assert Status.PASS == "pass" and "pass" == Status.PASS and {"pass": 1}[Status.PASS] == 1
    assert str(Verdict.XPASS) == "xpass" and f"{Stage.COMPILE}" == "compile"
    assert f"{Verdict.FAIL:>6}" == "  fail" and Verdict.FAIL.upper() == "FAIL"
    assert json.dumps({Verdict.FLAKY: [ExpectationKind.FAIL_RUN]}) == '{"flaky": ["fail-run"]}'
    assert ", ".join(vocabulary.VERDICTS) == "pass, xfail, flaky, fail, xpass, skip"
    assert vocabulary.STAGE_ORDER[0] == "prepare" and vocabulary.STAGE_ORDER[-1] == "compare"


def test_outcome_json_holds_plain_strings():
    outcome = Outcome("s/a", "stablehlo", "llvm-cpu", stage=Stage.RUN, status=Status.CRASH)
    outcome.verdict, outcome.expected = Verdict.XFAIL, outcome.observed
    outcome.attempts = [outcome.as_attempt()]
    data = outcome.to_json()
    assert type(data["verdict"]) is str and type(data["attempts"][0]["kind"]) is str
    assert Outcome.from_json(data).observed == ExpectationKind.CRASH


def test_case_key_round_trips_and_keeps_colons_in_case_ids():
    key = CaseKey("llvm-cpu", "stablehlo-ext/a.mlir:main")
    assert str(key) == "llvm-cpu:stablehlo-ext/a.mlir:main"
    assert CaseKey.parse(str(key)) == key
    assert CaseKey.of({"target": "vmvx", "case_id": "onnx-ops/test_abs"}) == CaseKey(
        "vmvx", "onnx-ops/test_abs"
    )
    with pytest.raises(ValueError, match="not a target:case key"):
        CaseKey.parse("no-colon")
