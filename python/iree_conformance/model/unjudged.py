"""The rule for a run that is no verdict, in one place for the suite and run-bundle.

Random values of an input whose values carry meaning (a shape, a sample rate; see
``Case.unjudged_reason``), or a graph whose outputs are random (a training-mode Dropout),
say nothing about IREE, whatever IREE does: a run that completes is not a pass, and a load
or run failure, or a run past its limit, is not a fail. Each is the harness's error at the
``reference`` stage; a failure keeps IREE's lines beside it.
"""

from __future__ import annotations

from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.model.outcome import Outcome


class InputsNotJudged(Exception):
    """IREE ran the model, but on inputs whose random values are no verdict."""

    def __init__(self, reason: str):
        super().__init__(f"IREE ran the model, but the run is no verdict: {reason}")


def judge_unjudged(outcome: Outcome, reason: str | None) -> bool:
    """Applies the rule to the outcome of a run (``stage`` load or run); True when it did,
    and the outcome is then final. A compile-only outcome, or one of judged inputs, is
    left alone."""
    if not reason:
        return False
    if outcome.status == Status.ERROR and outcome.stage in (Stage.LOAD, Stage.RUN):
        outcome.stage = Stage.REFERENCE
        outcome.diagnostics = [
            f"the run failed, but a run of this model is no verdict: {reason}",
            *outcome.diagnostics,
        ]
        return True
    if outcome.status == Status.TIMEOUT and outcome.stage in (Stage.LOAD, Stage.RUN):
        outcome.stage, outcome.status = Stage.REFERENCE, Status.ERROR
        outcome.diagnostics = [
            f"the run ran past its limit, but a run of this model is no verdict: {reason}",
            *outcome.diagnostics,
        ]
        return True
    if outcome.status == Status.PASS and outcome.stage == Stage.RUN:
        outcome.stage, outcome.status = Stage.REFERENCE, Status.ERROR
        outcome.diagnostics = [str(InputsNotJudged(reason))]  # the harness's, not a crash
        return True
    return False
