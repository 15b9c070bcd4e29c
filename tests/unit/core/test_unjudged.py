"""The rule for a run that is no verdict (model/unjudged.py)."""

from __future__ import annotations

from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.unjudged import judge_unjudged

RANDOM = "aten.multinomial.default draws random values on every run"


def _outcome(status: Status, stage: Stage) -> Outcome:
    return Outcome(
        "torch/x", "torch", "llvm-cpu", stage=stage, status=status, diagnostics=["IREE's line"]
    )


def test_a_run_past_its_limit_is_no_verdict_either():
    # Was: torch-mlir's MultinomialModule_basic (a million draws) ran past the run limit
    # and stayed "timeout at run", IREE's, while its values would have been no verdict.
    outcome = _outcome(Status.TIMEOUT, Stage.RUN)
    assert judge_unjudged(outcome, RANDOM)
    assert (outcome.status, outcome.stage) == (Status.ERROR, Stage.REFERENCE)
    assert outcome.diagnostics[0].startswith("the run ran past its limit, but a run of this")
    assert RANDOM in outcome.diagnostics[0] and outcome.diagnostics[1] == "IREE's line"


def test_a_compile_failure_stays_a_verdict():
    for status in (Status.ERROR, Status.TIMEOUT, Status.CRASH):
        outcome = _outcome(status, Stage.COMPILE)
        assert not judge_unjudged(outcome, RANDOM)
        assert (outcome.status, outcome.stage) == (status, Stage.COMPILE)
    assert not judge_unjudged(_outcome(Status.TIMEOUT, Stage.RUN), None)
