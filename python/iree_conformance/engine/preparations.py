"""The preparation comparison of a case that fails at import or compile.

A case whose frontend names another preparation of the same program
(``Case.other_preparation``: a torch case's torch core ATen decompositions beside
iree-turbine's) gets it imported and compiled by the worker, compile-only and alone, so
its module or its failure is cached in the store like any other. The Outcome's status
and stage stay as they were (IREE's failure under IREE's own preparation); what the
other preparation did is ``info["preparations"]`` and one diagnostic line after the
failure's own, e.g. "fails at compile with iree-turbine's decompositions; passes
import+compile with torch's core decompositions".
"""

from __future__ import annotations

import time
from typing import Any

from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.engine.attempt import Attempt
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.preparation import OtherPreparation

_STAGES = (Stage.IMPORT, Stage.COMPILE)


def _first(lines: list[str] | str) -> str:
    text = lines if isinstance(lines, str) else "\n".join(lines)
    found = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return found[0] if found else "(no message)"


def _compile(attempt: Attempt, other: OtherPreparation, worker: Any) -> tuple[str, str, str]:
    """(status, stage, first line) of the other preparation's import and compile."""
    if other.program is None:
        return Status.ERROR, Stage.IMPORT, _first(other.error)
    result = worker.execute(attempt.job(other.program, compile_only=True, alone=True))
    return result.status, result.stage, _first(result.diagnostics) if result.diagnostics else ""


def summary(used: str, failed_at: str, other: str, status: str, stage: str, line: str) -> str:
    said = f"fails at {failed_at} with {used}; "
    if status == Status.PASS:
        return said + f"passes import+compile with {other}"
    return said + f"fails with {other} too, at {stage}: {line}"


def compare(attempt: Attempt, outcome: Outcome, worker: Any) -> None:
    """Adds the other preparation's result to a failure at import or compile."""
    if outcome.status != Status.ERROR or outcome.stage not in _STAGES:
        return
    started = time.perf_counter()  # the other preparation (an export) and its compile
    try:
        other = attempt.case.other_preparation(str(outcome.stage))
    except Exception as e:  # noqa: BLE001 - information only: the verdict stands without it
        outcome.info["preparations"] = {"error": f"{type(e).__name__}: {e}"}
        return
    if other is None:
        return
    status, stage, line = _compile(attempt, other, worker)
    said = summary(other.used, str(outcome.stage), other.other, status, stage, line)
    outcome.info["preparations"] = {
        "used": other.used,
        "failed_at": str(outcome.stage),
        "other": other.other,
        "other_status": str(status),
        "other_stage": str(stage),
        "other_first_line": line,
        "summary": said,
        "seconds": round(time.perf_counter() - started, 3),
    }
    outcome.diagnostics.append(said)
