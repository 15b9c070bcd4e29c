"""``iree-conformance repro CASE_ID``: the case's reproducer folder, verified.

The case is looked up as ``pytest conformance`` collects it (suites/registry.py; the
suites' own options, such as ``--stablehlo-dir``, are accepted here too), run through
the same pipeline and store (a warm case compiles nothing), and, when it fails, written
as a folder of IREE's own commands and files (``make.py``) that a clean subprocess with
only IREE's tools on ``PATH`` then runs (``verify.py``). ISSUE.md's "did it work before"
comes from ``--versions-result`` or the newest stored ``versions``/``bisect`` run
(``worked_before.py``).

Exit status: 0 the folder was written and shows the failure (or the case passes:
nothing written; with ``--sources`` its generated code is); 1 the folder was written but
does not show the failure (repro.json and ISSUE.md say why); 2 bad arguments, an unknown
case (the nearest ids named), an existing folder without ``--force`` (with it: one that is
no reproducer folder, the working folder or above it, home, a root), a place that cannot be
written, a case id that would escape the folder, IREE's tools not on ``PATH`` (the
folder is kept, unverified);
9 the case is skipped here, fails in the harness, not in IREE, or fails in a Python
importer no IREE tool runs (a torch case's import: iree-turbine's).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iree_conformance.common.errors import (
    EXIT_CONFIGURATION,
    EXIT_MANIFEST,
    EXIT_UNJUDGED,
    ConfigurationError,
    exit_help,
)

if TYPE_CHECKING:
    from iree_conformance.repro.worked_before import WorkedBefore

EXIT_HELP = exit_help(
    {
        0: "written and reproduced, or the case passes (nothing written)",
        1: "written, but it does not show the failure (the folder says why)",
    },
    EXIT_CONFIGURATION,
    EXIT_MANIFEST,
    EXIT_UNJUDGED,
)
DEFAULT_ROOT = Path("repro")


def add_parser(sub: Any) -> None:
    from iree_conformance.suites.registry import SuiteRegistry

    p = sub.add_parser(
        "repro",
        help="write a failing case as a folder IREE's own tools reproduce (input.mlir, flags, inputs, repro.sh, ISSUE.md), and verify it",
        description=EXIT_HELP,
    )
    p.add_argument("case_id", help="the case id, e.g. onnx-ops/test_adagrad (as a report names it)")
    p.add_argument(
        "--target", default="llvm-cpu", help="target from targets.toml (default llvm-cpu)"
    )
    p.add_argument("--targets", help="targets file (default: conformance/targets.toml)")
    p.add_argument("-o", "--output", help="the folder to write (default repro/<target>/<case id>)")
    p.add_argument("--force", action="store_true", help="replace the folder if it exists")
    p.add_argument("--no-verify", action="store_true", help="write the folder without running it")
    p.add_argument(
        "--tools",
        metavar="DIR",
        help="verify with the IREE tools of this folder (default: those on PATH), e.g. a fresh venv's bin",
    )
    p.add_argument(
        "--sources",
        action="store_true",
        help="also dump the dispatch sources, executable benchmarks and compilation phases into dump/ (a passing case too)",
    )
    p.add_argument(
        "--reduce",
        action="store_true",
        help="also write reduced/: the smallest part of an ONNX model (its graph) or of any "
        "other program (its MLIR ops) that fails the same "
        "way (import, compile, crash) or its first diverging node (numerics), with a "
        "reproducer of its own, verified (docs/reducing.md)",
    )
    from iree_conformance.repro.reduced import add_budget_argument

    add_budget_argument(p)
    p.add_argument(
        "--versions-result",
        metavar="PATH",
        help="fill ISSUE.md's 'did it work before' from this versions or bisect result: its "
        "results folder (--out), or a versions --json / bisect --json file (default: the "
        "newest run stored under <version stores>/_runs that holds the case)",
    )
    p.add_argument("--store-dir", help="artifact store (default: as pytest conformance)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the store")
    for suite, option in SuiteRegistry.builtin().options():
        kwargs = dict(option.kwargs)
        p.add_argument(option.flag, help=f"({suite.name}) {option.help}", **kwargs)
    p.set_defaults(func=run)


def say_worked_before(worked: WorkedBefore, out) -> None:
    """Where ISSUE.md's "Did it work before?" came from, or why a result given could not say."""
    from iree_conformance.common.markdown_escape import plain_text

    for why in worked.skipped:
        print(f"did it work before: skipped {plain_text(why)}", file=out)
    if worked.problem:
        print(f"did it work before: not known: {plain_text(worked.problem)}", file=out)
    elif worked.source:
        said = plain_text(f"{worked.text} (from {worked.source})")
        print(f"did it work before: {said}", file=out)


def run(args: argparse.Namespace, targets_path: Path, out=None) -> int:
    from iree_conformance.common.platform_info import host_os
    from iree_conformance.common.store import ArtifactStore, default_store_dir
    from iree_conformance.common.vocabulary import Status
    from iree_conformance.engine.attempt import Attempt, AttemptSettings
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.expectations.lookup import load_expectations
    from iree_conformance.model.targets import check_runnable, named_target
    from iree_conformance.repro import make, worked_before
    from iree_conformance.repro.lookup import find_case, folder_for
    from iree_conformance.suites.registry import SuiteRegistry
    from iree_conformance.suites.run_options import RunOptions

    out = out or sys.stdout
    target = named_target(targets_path, args.target)
    conformance_dir = targets_path.parent
    folder = (
        Path(args.output) if args.output else folder_for(DEFAULT_ROOT, target.name, args.case_id)
    )
    from iree_conformance.repro.writer import check_destination

    check_destination(folder, args.force)
    check_runnable(target)
    options = RunOptions(
        store_dir=Path(args.store_dir) if args.store_dir else None, no_cache=args.no_cache
    )
    registry = SuiteRegistry.builtin()
    given = {o.dest: getattr(args, o.dest, None) for _, o in registry.options()}
    case = find_case(args.case_id, conformance_dir, options, given, registry)
    expectations = load_expectations(conformance_dir / "expectations", target.name, host_os())
    store = ArtifactStore(None if args.no_cache else Path(args.store_dir or default_store_dir()))
    worker = WorkerClient(store.root)
    try:
        outcome, _ = run_case(
            Attempt(
                case,
                target,
                AttemptSettings(alone=True),
                tolerance=expectations.tolerance_for(case.case_id),
            ),
            worker,
        )
    finally:
        worker.close()
    print(f"{case.case_id} on {target.name}: {outcome.status} at {outcome.stage}", file=out)
    why_not = make.not_reproducible_reason(outcome, args.sources)
    if why_not is not None:
        print(f"no reproducer written: {why_not}", file=out)
        return 0 if outcome.status == Status.PASS else EXIT_UNJUDGED
    worked = None
    if outcome.status != Status.PASS:
        worked = worked_before.lookup(args.versions_result, case.case_id, target.name)
        say_worked_before(worked, out)
    record = make.make_for_case(
        case,
        target,
        outcome,
        folder,
        store,
        conformance_dir,
        make.ReproOptions(
            force=args.force, verify=not args.no_verify, sources=args.sources, tools_path=args.tools
        ),
        expectations,
        worked,
    )
    status = report(record, folder, out)
    if args.reduce and record.get("kind") != "pass":
        _reduce(case, target, outcome, folder, store, args, out)
    return status


def _reduce(case, target, outcome, folder: Path, store, args, out) -> None:
    """repro --reduce: folder/reduced, its reproducer verified: an ONNX model's graph
    (repro/reduced.py), any other program's input.mlir op by op (repro/reduced_mlir.py)."""
    from iree_conformance.engine.reduction import Reducible
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.repro.reduced import progress_bar, reducible, write_reduced_repro
    from iree_conformance.repro.reduced_mlir import (
        REDUCED_IMPORTED,
        mlir_reducible_reason,
        reduce_folder,
    )
    from iree_conformance.repro.spec import INPUT_MLIR

    worker = WorkerClient(store.root)
    update, close = progress_bar()
    imported: dict = {}
    try:
        if isinstance(reducible(case), Reducible):
            found = write_reduced_repro(
                case, target, outcome, folder, worker, args.reduce_budget, args.tools, update
            )
            if (folder / INPUT_MLIR).is_file() and mlir_reducible_reason(outcome) is None:
                imported = reduce_folder(
                    folder, outcome, target, worker, store, args.reduce_budget, args.tools,
                    update, force=args.force, name=REDUCED_IMPORTED,
                )  # fmt: skip
        else:
            found = reduce_folder(
                folder, outcome, target, worker, store, args.reduce_budget, args.tools, update,
                force=args.force,
            )  # fmt: skip
            found.update(found.pop("reproducer", {}))
    finally:
        close()
        worker.close()
    for key in ("summary", "note"):
        if found.get(key):
            print(found[key], file=out)
    verdict = {True: "reproduced", False: "NOT reproduced", None: "not verified"}
    if "reproduced" in found:
        print(f"reduced/repro.sh: {verdict[found['reproduced']]}: {found.get('why')}", file=out)
    if imported.get("summary"):
        reproducer = imported.get("reproducer") or {}
        print(f"the imported program: {imported['summary']}", file=out)
        print(f"{REDUCED_IMPORTED}/repro.sh: {verdict[reproducer.get('reproduced')]}: "
              f"{reproducer.get('why')}", file=out)  # fmt: skip


def report(record: dict[str, Any], folder: Path, out) -> int:
    """Prints what was written and whether it reproduced; the command's exit status."""
    print(f"wrote {folder}", file=out)
    issue = (record.get("context") or {}).get("issue")
    if issue:
        print(f"matches {issue}", file=out)
    verification = record.get("verification") or {}
    if record.get("kind") == "pass":
        print(
            "the case passes"
            + (": its generated code is in dump/" if record.get("sources") else ""),
            file=out,
        )
        return 0
    if verification.get("tools_missing"):
        raise ConfigurationError(
            f"{folder} was written but not verified: {verification.get('why')}"
        )
    reproduced = record.get("reproduced")
    if reproduced:
        print(f"reproduced with IREE's tools alone: {verification.get('why')}", file=out)
        return 0
    print(f"not reproduced: {verification.get('why')}", file=out)
    return 0 if reproduced is None else 1
