"""``pytest conformance --repro-dir DIR``: a reproducer per red case, from the run's store.

Nothing runs for a green case. A case whose folder cannot be made (an id that would
escape DIR, a folder already there from an earlier run: replaced, since a run's folders
are its own) says so in ``Outcome.info["repro"]``, never in its verdict.
"""

from __future__ import annotations

from pathlib import Path

from iree_conformance.common.errors import ConformanceError
from iree_conformance.common.store import ArtifactStore
from iree_conformance.common.vocabulary import RED_VERDICTS, Verdict
from iree_conformance.expectations.lookup import Expectations
from iree_conformance.model.cases import Case
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.targets import Target
from iree_conformance.repro import make
from iree_conformance.repro.lookup import folder_for
from iree_conformance.suites.run_options import RunOptions


def wanted(outcome: Outcome, expected_too: bool) -> bool:
    """A red case that failed (an xpass passed: nothing to reproduce), or with
    --repro-expected an expected failure."""
    if outcome.verdict == Verdict.XFAIL:
        return expected_too
    return outcome.verdict in RED_VERDICTS and make.not_reproducible_reason(outcome) is None


def write_for_run(
    case: Case,
    target: Target,
    outcome: Outcome,
    expectations: Expectations,
    store: ArtifactStore,
    conformance_dir: Path,
    options: RunOptions,
) -> dict | None:
    """The folder of one judged case, when it is wanted; what happened, for info.repro."""
    if options.repro_dir is None or not wanted(outcome, options.repro_expected):
        return None
    why_not = make.not_reproducible_reason(outcome)
    if why_not is not None:  # an expected failure no folder can show (a torch import)
        return {"folder": None, "reproduced": None, "why": f"no reproducer: {why_not}"}
    try:
        folder = folder_for(Path(options.repro_dir), target.name, case.case_id)
        forced = make.ReproOptions(force=True)
        record = make.make_for_case(
            case, target, outcome, folder, store, conformance_dir, forced, expectations
        )
    except (ConformanceError, OSError, RuntimeError) as e:
        return {"error": f"no reproducer: {e}"}
    verification = record.get("verification") or {}
    return {
        "folder": str(folder),
        "reproduced": record.get("reproduced"),
        "why": verification.get("why"),
        "from_store": bool(verification.get("from_store")),
    }
