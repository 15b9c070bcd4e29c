"""``iree-conformance reduce MODEL.onnx``: the smallest part of a failing model that fails
the same way (docs/reproducers.md, "Reducing a failing model").

The model runs whole, as ``check-model`` runs it (its spec files, ``--dim``,
``--input-shape``); an import, compile or crash failure is then reduced by delta
debugging over its nodes (engine/reduction.py), every candidate compiled through the
artifact store; a numerics failure's first diverging node is run alone. The result goes
to ``DIR/reduced/`` (``model.onnx``, ``input_K.npy``, ``reduction.json``).

Exit status: 0 the model passes (nothing written); 1 IREE failed (reduced, or the
message says why not); 2 bad arguments, an unreadable model, or an output folder that
exists (``--force``); 3 a malformed spec file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iree_conformance.common.errors import (
    EXIT_CONFIGURATION,
    EXIT_MANIFEST,
    ConfigurationError,
    exit_help,
)
from iree_conformance.common.vocabulary import Status

__all__ = ["DEFAULT_BUDGET_S", "add_budget_argument", "add_parser", "progress_bar", "run_reduction"]

#: --reduce-budget's default: ten minutes of compiles.
DEFAULT_BUDGET_S = 600.0


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected seconds above 0, got {text!r}")
    return value


def add_budget_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reduce-budget",
        type=_budget,
        default=DEFAULT_BUDGET_S,
        metavar="SECONDS",
        help=f"stop reducing after this long and keep the smallest failing graph found "
        f"(default {DEFAULT_BUDGET_S:g})",
    )


def add_parser(sub) -> None:
    from iree_conformance.suites.run_options import dim_size, input_shape

    p = sub.add_parser(
        "reduce",
        help="cut a failing ONNX model down to the smallest subgraph that fails the same way "
        "(import, compile, crash), or run a numerics failure's first diverging node alone",
        description=exit_help(
            {0: "the model passes", 1: "IREE failed (reduced, or why not)"},
            EXIT_CONFIGURATION,
            EXIT_MANIFEST,
        ),
    )
    p.add_argument("model", help="the .onnx file")
    p.add_argument("--target", default="llvm-cpu", help="target (default llvm-cpu)")
    p.add_argument("--targets", help="targets file (default: conformance/targets.toml)")
    p.add_argument("--dim", action="append", default=[], type=dim_size, metavar="NAME=SIZE")
    p.add_argument(
        "--input-shape", action="append", default=[], type=input_shape, metavar="INPUT=SHAPE"
    )
    p.add_argument("--dynamic", action="store_true", help="the model as exported, symbolic dims")
    add_budget_argument(p)
    p.add_argument("-o", "--output", help="output folder (default: ./<model stem>-reduced)")
    p.add_argument("--force", action="store_true", help="write into an output folder that exists")
    p.add_argument("--store-dir", help="artifact store (default: as pytest conformance)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the store")
    p.set_defaults(func=cmd_reduce)


def progress_bar():
    """A tqdm bar on a terminal (stderr), nothing elsewhere: (callback, close)."""
    from tqdm import tqdm

    bar = tqdm(desc="reducing", unit=" candidates", disable=not sys.stderr.isatty(), leave=False)

    def update(tested: int, smallest: int) -> None:
        bar.n = tested
        bar.set_postfix_str(f"smallest {smallest} nodes", refresh=True)

    return update, bar.close


def check_output(out_dir: Path, force: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigurationError(f"{out_dir} exists and is no folder; give another -o")
    if (out_dir / "reduced").exists() and not force:
        raise ConfigurationError(
            f"{out_dir / 'reduced'} exists; give another -o, or --force to replace its files"
        )


def run_reduction(case, target, worker, args, out_dir: Path, out, outcome=None) -> int:
    """Reduces the case's failure, prints what it found and writes ``out_dir/reduced``
    (shared by ``reduce`` and ``check-model --reduce``)."""
    from iree_conformance.engine.reduction import reduce_case, write_reduced

    update, close = progress_bar()
    try:
        report = reduce_case(case, target, worker, args.reduce_budget, update, outcome)
    finally:
        close()
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
    if report.reduced is not None:
        written = write_reduced(report, out_dir, target)
        print(f"wrote {', '.join(str(p) for p in written)}", file=out)
    return 1


def cmd_reduce(args: argparse.Namespace) -> int:
    from iree_conformance.cli.check_model import _case
    from iree_conformance.cli.main import _targets_path
    from iree_conformance.common.store import ArtifactStore, default_store_dir
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.model.targets import load_targets, unavailable_reason, uncompilable_reason

    targets = load_targets(_targets_path(args.targets))
    if args.target not in targets:
        raise ConfigurationError(f"unknown target {args.target!r}; known: {', '.join(targets)}")
    target = targets[args.target]
    reason = unavailable_reason(target) or uncompilable_reason(target)
    if reason:
        raise ConfigurationError(f"target {target.name} cannot run here: {reason}")
    out_dir = Path(args.output or f"{Path(args.model).stem}-reduced")
    check_output(out_dir, args.force)
    case = _case(args)
    print(f"{case.case_id.removeprefix('onnx-dir/')} on {target.name}", file=sys.stdout)
    store = ArtifactStore(None if args.no_cache else Path(args.store_dir or default_store_dir()))
    worker = WorkerClient(store.root)
    try:
        return run_reduction(case, target, worker, args, out_dir, sys.stdout)
    finally:
        worker.close()
