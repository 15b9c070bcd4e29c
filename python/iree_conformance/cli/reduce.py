"""``iree-conformance reduce MODEL.onnx`` (or ``PROGRAM.mlir``): the smallest part of a
failing model that fails the same way (docs/reducing.md); an .mlir program's compile
failure or compiler crash is cut op by op (repro/reduced_mlir.py) into a reproducer folder.

The model runs whole, as ``check-model`` runs it (its spec files, ``--dim``,
``--input-shape``); an import, compile or crash failure is then reduced by delta
debugging over its nodes (engine/reduction.py), every candidate compiled through the
artifact store; a numerics failure's first diverging node is run alone. The result goes
to ``DIR/reduced/`` (``model.onnx``, ``input_K.npy``, ``reduction.json``).

Exit status: 0 the model passes (nothing written); 1 IREE failed (reduced, or the
message says why not); 2 bad arguments, an unreadable model, or an output folder that
exists (``--force``); 3 a malformed spec file; 9 the harness cannot judge the model (as
``check-model``: no reference, a skip).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iree_conformance.cli import reducing
from iree_conformance.common.errors import (
    EXIT_CONFIGURATION,
    EXIT_MANIFEST,
    EXIT_UNJUDGED,
    ConfigurationError,
    exit_help,
)

__all__ = ["add_parser", "run"]


def add_parser(sub, func) -> None:
    from iree_conformance.suites.run_options import dim_size, input_shape

    p = sub.add_parser(
        "reduce",
        help="cut a failing ONNX model down to the smallest subgraph that fails the same way "
        "(import, compile, crash), or run a numerics failure's first diverging node alone",
        description=exit_help(
            {0: "the model passes", 1: "IREE failed (reduced, or why not)"},
            EXIT_CONFIGURATION,
            EXIT_MANIFEST,
            EXIT_UNJUDGED,
        ),
    )
    p.add_argument("model", help="the .onnx file, or an .mlir program (its ops are reduced)")
    p.add_argument(
        "--input-type",
        default="auto",
        help="an .mlir program's --iree-input-type (default auto: stablehlo, torch, ...)",
    )
    p.add_argument("--target", default="llvm-cpu", help="target (default llvm-cpu)")
    p.add_argument("--targets", help="targets file (default: conformance/targets.toml)")
    p.add_argument("--dim", action="append", default=[], type=dim_size, metavar="NAME=SIZE")
    p.add_argument(
        "--input-shape", action="append", default=[], type=input_shape, metavar="INPUT=SHAPE"
    )
    p.add_argument("--dynamic", action="store_true", help="the model as exported, symbolic dims")
    reducing.add_budget_argument(p)
    p.add_argument("-o", "--output", help="output folder (default: ./<model stem>-reduced)")
    p.add_argument("--force", action="store_true", help="write into an output folder that exists")
    p.add_argument("--store-dir", help="artifact store (default: as pytest conformance)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the store")
    p.set_defaults(func=func)


def run(args: argparse.Namespace, targets_path: Path) -> int:
    from iree_conformance.cli.check_model import _case
    from iree_conformance.common.store import ArtifactStore, default_store_dir
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.model.targets import check_runnable, named_target

    target = named_target(targets_path, args.target)
    check_runnable(target)
    out_dir = Path(args.output or f"{Path(args.model).stem}-reduced")
    reducing.check_output(out_dir, args.force)
    if Path(args.model).suffix == ".mlir":
        return _reduce_mlir(args, target, out_dir)
    case = _case(args)
    print(f"{case.case_id.removeprefix('onnx-dir/')} on {target.name}", file=sys.stdout)
    store = ArtifactStore(None if args.no_cache else Path(args.store_dir or default_store_dir()))
    worker = WorkerClient(store.root)
    try:
        return reducing.run_reduction(case, target, worker, args, out_dir, sys.stdout)
    except KeyboardInterrupt:
        worker.close(wait=False)  # Ctrl-C reached the worker too: no wait for it
        raise
    finally:
        worker.close()


def _reduce_mlir(args: argparse.Namespace, target, out_dir: Path) -> int:
    """An .mlir program compiled whole (compile only), then cut op by op
    (repro/reduced_mlir.py) into ``out_dir/reduced``, a verified reproducer folder."""
    from iree_conformance.common.store import ArtifactStore, default_store_dir
    from iree_conformance.common.vocabulary import Status
    from iree_conformance.engine.attempt import Attempt, AttemptSettings
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.frontends.mlir_reduce import MlirReductionError
    from iree_conformance.model.cases import Case
    from iree_conformance.repro import reduced_mlir

    path = Path(args.model)
    if not path.is_file():
        raise ConfigurationError(f"{path}: no such file; give the .mlir program to reduce")
    text = path.read_text(encoding="utf-8", errors="replace")
    case = Case(case_id=f"mlir/{path.stem}", suite="mlir", kind="mlir",
                source_bytes=text.encode("utf-8"), input_type=args.input_type)  # fmt: skip
    flags = target.case_flags(case)
    print(f"{path.name} on {target.name}", file=sys.stdout)
    store = ArtifactStore(None if args.no_cache else Path(args.store_dir or default_store_dir()))
    worker = WorkerClient(store.root)
    update, close = reducing.progress_bar()
    try:
        attempt = Attempt(case, target, AttemptSettings(compile_only=True, alone=True))
        outcome, _ = run_case(attempt, worker)
        if outcome.status == Status.PASS:
            print(f"pass: {path.name} compiles on {target.name}: nothing to reduce")
            return 0
        first = next((d for d in outcome.diagnostics if d.strip()), "(no diagnostic)")
        print(f"failure: {outcome.status}@{outcome.stage}: {first.strip()}")
        why = reduced_mlir.mlir_reducible_reason(outcome)
        if why is not None:
            print(why)
            return 1
        try:
            found, diagnostics = reduced_mlir.reduce_mlir_program(
                text, flags, outcome, target, worker, args.reduce_budget, update
            )
        except MlirReductionError as e:
            print(f"not reduced: {e}")
            return 1
    finally:
        close()
        worker.close()
    print(found.summary())
    spec = reduced_mlir.reduced_spec(found, case.case_id, target, outcome, flags, diagnostics)
    record = reduced_mlir.write_reduced_mlir(
        found, spec, out_dir / reduced_mlir.REDUCED, store, None, force=args.force
    )
    verdict = {True: "reproduced", False: "NOT reproduced", None: "not verified"}
    reproducer = record["reproducer"]
    print(f"wrote {out_dir / reduced_mlir.REDUCED}: {verdict[reproducer['reproduced']]}: "
          f"{reproducer['why']}")  # fmt: skip
    return 1
