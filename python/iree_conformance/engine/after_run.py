"""The steps after a run, in one place for the pipeline and ``run-bundle``: inputs that are
no verdict, the checks (the reference stage), the comparison, its messages, the timing of a
pass, and the source line an annotation of a failure points to.

The caller ran the program (the worker, or run-bundle's runtime) and wrote what happened
into the Outcome (``status`` and ``stage``: ``pass`` at ``run``, or where it failed);
``after_run`` completes it. What differs between the callers (where the expected values
come from, how a pass is timed) is given as ``RunJudging``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.model.cases import CaseSkipped, ChecksFailed
from iree_conformance.model.compare import Check, Tolerance, compare_checks
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.unjudged import judge_unjudged

# At most this many diagnostic lines of a comparison that failed.
MAX_MESSAGES = 8


def _no_timing() -> dict[str, Any] | None:
    return None


@dataclasses.dataclass(frozen=True)
class RunJudging:
    """What the steps after a run need to know of the case."""

    # The reference stage: what ran, paired with what was expected. May raise CaseSkipped
    # (a skip), ChecksFailed (a fail with its lines) or anything else (the harness's error).
    checks: Callable[[], list[Check]]
    unjudged: str | None = None  # why these inputs are no verdict (Case.unjudged_reason)
    tolerance: Tolerance | None = None  # the manifest's, merged over each check's
    compile_only: bool = False  # nothing ran: nothing to compare
    timing: Callable[[], dict[str, Any] | None] = _no_timing  # a pass's timing, if asked for
    source: dict[str, Any] | None = None  # where the case is written: {"path", "line"}


def after_run(outcome: Outcome, judging: RunJudging) -> None:
    """Completes the Outcome of a run (or of a failure before it): judged inputs, checks,
    comparison, timing, and ``info["source"]`` for a result that is not a pass or skip."""
    failed = _compare(outcome, judging)
    if outcome.status not in (Status.PASS, Status.SKIP) and judging.source is not None:
        source = dict(judging.source)
        if failed is not None and failed.line is not None:
            source["line"] = failed.line  # the failing check op's line is the precise one
        outcome.info["source"] = source


def _compare(outcome: Outcome, judging: RunJudging) -> Check | None:
    """The steps up to the verdict; returns the first check that failed, if any."""
    # A run on meaningless values (a random sample rate, a random shape) says nothing
    # about IREE: the harness's error (model/unjudged.py).
    if (
        judge_unjudged(outcome, judging.unjudged)
        or outcome.status != Status.PASS
        or judging.compile_only
    ):
        return None
    outcome.stage = Stage.REFERENCE
    started = time.perf_counter()
    try:
        checks = judging.checks()
    except CaseSkipped as e:
        outcome.status, outcome.reason = Status.SKIP, str(e)
        return None
    except ChecksFailed as e:
        outcome.stage, outcome.status, outcome.diagnostics = Stage.COMPARE, Status.FAIL, e.lines
        outcome.stage_times["reference"] = time.perf_counter() - started
        return None
    except Exception as e:  # noqa: BLE001 - a broken reference is the harness's error
        outcome.status = Status.ERROR
        outcome.diagnostics = [f"reference failed: {type(e).__name__}: {e}"]
        outcome.stage_times["reference"] = time.perf_counter() - started
        return None
    outcome.stage_times["reference"] = time.perf_counter() - started
    if not checks:
        outcome.status = Status.ERROR
        outcome.diagnostics = ["the reference produced no comparisons: nothing would be checked"]
        return None
    outcome.stage = Stage.COMPARE
    started = time.perf_counter()
    comparison = compare_checks(checks, judging.tolerance)
    outcome.stage_times["compare"] = time.perf_counter() - started
    outcome.metrics = comparison.metrics
    if not comparison.messages and comparison.metrics["compared_elements"] == 0:
        # Shapes and dtypes matched, but there was no value to compare: say so.
        outcome.info["note"] = (
            "no elements compared: every output is empty (shapes and dtypes match)"
        )
    if comparison.messages:
        outcome.status = Status.FAIL
        outcome.diagnostics = comparison.messages[:MAX_MESSAGES]
        return checks[comparison.failed[0]] if comparison.failed else None
    timing = judging.timing()
    if timing is not None:
        outcome.metrics["timing"] = timing
    return None
