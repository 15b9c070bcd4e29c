"""One reproducer from one Outcome: the spec (``source.py``), the known issue of its
signature, the folder (``writer.py``). The one path for ``iree-conformance repro``,
``pytest conformance --repro-dir`` and ``check-model --repro-dir``."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from iree_conformance.common.store import ArtifactStore
from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.expectations.known_issues import FILE_NAME, load_known_issues
from iree_conformance.expectations.lookup import Expectations
from iree_conformance.model.cases import Case
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.targets import Target
from iree_conformance.repro import source, writer
from iree_conformance.repro.versions import version_info
from iree_conformance.repro.worked_before import WorkedBefore

#: The failures a reproducer is made for: IREE's (not the harness's prepare or reference).
IREE_KINDS = ("fail-import", "fail-compile", "fail-run", "fail-numerics", "crash", "timeout")
_BISECT_PREFIX = "bisect-numerics: "
#: Suites whose import is Python in the harness's process, with no IREE command-line tool
#: (ONNX's has iree-import-onnx): an import failure there has no reproducer folder.
IN_PROCESS_IMPORTERS = {
    "torch": "iree-turbine's preparation and FX importer (Python)",
    "llm": "iree-turbine's preparation and FX importer (Python)",
}


@dataclasses.dataclass(frozen=True)
class ReproOptions:
    force: bool = False
    verify: bool = True
    sources: bool = False
    tools_path: str | None = None  # where to look for IREE's tools (default $PATH)
    timeout_s: float = 600.0


def not_reproducible_reason(outcome: Outcome, sources: bool = False) -> str | None:
    """Why no folder is made for this Outcome (a pass, a skip, the harness's own error);
    None when one is. ``sources``: a pass gets one too (its generated code)."""
    if outcome.status == Status.PASS:
        return None if sources else "it passes: there is nothing to reproduce"
    if outcome.status == Status.SKIP:
        return f"it is skipped here ({outcome.reason or 'no reason given'})"
    if outcome.failure_kind not in IREE_KINDS:
        return (
            f"its failure is the harness's, not IREE's ({outcome.failure_kind} at {outcome.stage})"
        )
    if outcome.suite in IN_PROCESS_IMPORTERS and outcome.stage in (Stage.PREPARE, Stage.IMPORT):
        return (
            f"it fails in {IN_PROCESS_IMPORTERS[outcome.suite]}, which IREE's command-line "
            "tools do not run, so no folder of theirs can show it: the failure's message "
            "is the report (the case's file and the versions reproduce it)"
        )
    return None


def make_for_case(
    case: Case,
    target: Target,
    outcome: Outcome,
    out: Path,
    store: ArtifactStore,
    conformance_dir: Path,
    options: ReproOptions = ReproOptions(),
    expectations: Expectations | None = None,
    worked_before: WorkedBefore | None = None,
) -> dict[str, Any]:
    """Writes the folder; returns its repro.json record. The issue it names is the case's
    manifest entry's (given the target's expectations, whose tolerance it also takes), else
    the known issue of the conformance folder that matches its first line."""
    known = load_known_issues(conformance_dir / FILE_NAME)
    writer.check_destination(out, options.force)
    kind = "pass" if outcome.status == Status.PASS else None
    manifest_tolerance = None
    manifest_issue = None
    if expectations is not None:
        manifest_tolerance = expectations.tolerance_for(case.case_id)
        manifest_issue = getattr(expectations.xfail.get(case.case_id), "issue", None)
    spec = source.build_spec(case, target, outcome, store, manifest_tolerance, kind)
    if options.sources:
        spec.sources_dir = "dump"
    if manifest_issue:
        spec.context["issue"] = manifest_issue
    elif spec.kind != "pass":
        match = known.match(spec.stage, spec.first_line)
        if match is not None:
            spec.context["issue"] = match.issue
    for line in outcome.diagnostics:
        if line.startswith(_BISECT_PREFIX):
            spec.context["diverging_node"] = line[len(_BISECT_PREFIX) :]
    if worked_before is not None:
        spec.context["worked_before"] = worked_before.record()
    return writer.write(
        spec,
        out,
        version_info(),
        force=options.force,
        verify_it=options.verify and spec.kind != "pass",
        tools_path=options.tools_path,
        timeout_s=options.timeout_s,
        store=store,
    )
