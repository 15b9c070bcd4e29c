"""What ``reduce`` and ``check-model --reduce`` share: the budget option, the output
folder's check, the progress bar and the printed result (cli/reduce.py)."""

from __future__ import annotations

from pathlib import Path

from iree_conformance.common.errors import EXIT_UNJUDGED, ConfigurationError
from iree_conformance.common.machine_faults import MACHINE
from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.model.outcome import Outcome
from iree_conformance.repro.reduced import (  # shared with repro --reduce
    DEFAULT_BUDGET_S,
    add_budget_argument,
    progress_bar,
)

__all__ = [
    "DEFAULT_BUDGET_S",
    "add_budget_argument",
    "check_output",
    "progress_bar",
    "run_reduction",
    "unjudged",
]


def check_output(out_dir: Path, force: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigurationError(f"{out_dir} exists and is no folder; give another -o")
    if (out_dir / "reduced").exists() and not force:
        raise ConfigurationError(
            f"{out_dir / 'reduced'} exists; give another -o, or --force to replace its files"
        )


def unjudged(outcome: Outcome) -> bool:
    """The harness cannot judge the model (check-model's and reduce's exit 9): a skip, an
    error at the reference stage (no usable reference, ``Outcome.not_judged``), or a
    fault of the machine (``common/machine_faults``)."""
    return (
        outcome.status == Status.SKIP
        or outcome.not_judged
        or (outcome.status == Status.ERROR and outcome.stage == Stage.REFERENCE)
        or outcome.info.get("harness_error") == MACHINE
    )


def run_reduction(case, target, worker, args, out_dir: Path, out, outcome=None) -> int:
    """Reduces the case's failure, prints what it found and writes ``out_dir/reduced``
    (shared by ``reduce`` and ``check-model --reduce``)."""
    from iree_conformance.engine.reduction import reduce_case, write_reduced
    from iree_conformance.repro.reduced import write_graph_folder

    update, close = progress_bar()
    try:
        report = reduce_case(case, target, worker, args.reduce_budget, update, outcome)
    finally:
        close()
    if unjudged(report.outcome):  # as check-model says: no verdict, exit 9
        o = report.outcome
        why = o.reason or (o.diagnostics[0] if o.diagnostics else "no reason given")
        print(f"not judged: {o.status} at {o.stage}: {why}; nothing to reduce", file=out)
        return EXIT_UNJUDGED
    if report.signature is None:
        print(f"pass: {report.note}", file=out)
        return 0
    print(f"failure: {report.signature.stage}: {report.signature.first_line}", file=out)
    if report.result is not None:
        print(report.result.summary(), file=out)
    if report.numerics is not None:
        print(report.numerics.summary(), file=out)
    elif report.outcome.status == Status.FAIL:
        print("no intermediate tensor diverges: no node to isolate", file=out)
    if report.note:
        print(report.note, file=out)
    if report.result is not None and report.signature is not None:
        found = write_graph_folder(report, target, target.case_flags(case), out_dir, None)
        verdict = {True: "reproduced", False: "NOT reproduced", None: "not verified"}
        print(f"wrote {out_dir / 'reduced'}: {verdict[found['reproduced']]}: {found['why']}",
              file=out)  # fmt: skip
    elif report.reduced is not None:
        written = write_reduced(report, out_dir, target)
        print(f"wrote {', '.join(str(p) for p in written)}", file=out)
    return 1
