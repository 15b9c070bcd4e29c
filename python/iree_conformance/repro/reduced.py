"""``repro --reduce``: the reproducer folder's ``reduced/``, the smallest part of an ONNX
model that fails the same way (engine/reduction.py), with a reproducer of its own.

An import, compile or crash failure's reduced model is a reproducer folder as any
(``writer.write``: ``model.onnx``, the ``iree-import-onnx`` line, the case's own
``compile.flags``, ``run.flags``, its inputs, ``repro.sh``, ``repro.cmd``, ISSUE.md
saying "reduced from N to M nodes"), verified in a clean subprocess with only IREE's
tools on ``PATH``; ``reduction.json`` beside says whether it showed the same stage and
first line. A numerics failure's first
diverging node is written as a model of its own with the values it saw; whether IREE
alone shows the mismatch on it is the reduction's own check (its ``note``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.model.cases import Case
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.targets import Target
from iree_conformance.repro import writer
from iree_conformance.repro.source import import_line
from iree_conformance.repro.versions import version_info

REDUCED = "reduced"
#: --reduce-budget's default: ten minutes of compiles.
DEFAULT_BUDGET_S = 600.0
COMPILE_FLAGS = "compile.flags"
#: How long the reduced reproducer may run when verified.
VERIFY_TIMEOUT_S = 600.0


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):  # inf would be written as Infinity: not JSON
        raise argparse.ArgumentTypeError(
            f"expected a finite number of seconds above 0, got {text!r}"
        )
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


def progress_bar():
    """A tqdm bar on a terminal (stderr), nothing elsewhere: (callback, close)."""
    from tqdm import tqdm

    bar = tqdm(desc="reducing", unit=" candidates", disable=not sys.stderr.isatty(), leave=False)

    def update(tested: int, smallest: int) -> None:
        bar.n = tested
        bar.set_postfix_str(f"smallest {smallest} nodes", refresh=True)

    return update, bar.close


def reducible(case: Case) -> Case:
    """The case as the reducer takes it: an ONNX operator test or zoo model is reduced as
    its model file is (``iree-conformance reduce FILE``); other cases as they are."""
    from iree_conformance.engine.reduction import Reducible
    from iree_conformance.suites.onnx_dir import model_cases
    from iree_conformance.suites.run_options import RunOptions

    if isinstance(case, Reducible) or case.kind != "onnx" or case.source_path is None:
        return case
    path = Path(case.source_path).resolve()
    found = model_cases(path, path.parent, RunOptions())
    if not found or getattr(found[0], "problem", None):
        return case
    return found[0]


def write_reduced_repro(
    case: Case,
    target: Target,
    outcome: Outcome,
    folder: Path,
    worker: Any,
    budget_s: float | None,
    tools: str | None,
    progress: Any = None,
) -> dict[str, Any]:
    """Reduces the case's failure into ``folder/reduced`` and verifies its reproducer;
    returns what ``reduction.json`` records (``reproduced`` when it could be run)."""
    from iree_conformance.engine.reduction import reduce_case, write_reduced

    report = reduce_case(reducible(case), target, worker, budget_s, progress, outcome)
    record: dict[str, Any] = {"note": report.note}
    if report.result is not None:
        record["summary"] = report.result.summary()
    if report.numerics is not None:
        record["summary"] = report.numerics.summary()
    if report.reduced is None:
        return record
    if report.result is None or report.signature is None:
        write_reduced(report, folder, target)
        return record  # numerics: the isolation's own check says whether IREE alone shows it
    lines = (folder / COMPILE_FLAGS).read_text(encoding="utf-8").splitlines()
    record.update(write_graph_folder(report, target, tuple(x for x in lines if x), folder, tools))
    return record


def write_graph_folder(
    report: Any, target: Target, flags: tuple[str, ...], out_dir: Path, tools: str | None
) -> dict[str, Any]:
    """``out_dir/reduced``: the reduced model as a reproducer folder, verified, with
    ``reduction.json`` (engine/reduction.write_reduced); returns whether it reproduced."""
    from iree_conformance.engine.reduction import write_reduced

    spec = reduced_graph_spec(report, report.outcome, target, flags)
    written = writer.write(
        spec, out_dir / REDUCED, version_info(), force=True, tools_path=tools,
        timeout_s=VERIFY_TIMEOUT_S,
    )  # fmt: skip
    write_reduced(report, out_dir, target)  # model.onnx (the same bytes), inputs, reduction.json
    found = {
        "reproduced": written.get("reproduced"),
        "why": (written.get("verification") or {}).get("why"),
    }
    _merge_record(out_dir / REDUCED / "reduction.json", found)
    return found


def reduced_graph_spec(report: Any, outcome: Outcome, target: Target, flags: tuple[str, ...]):
    """The reduced model as a reproducer: ``iree-import-onnx``, then ``iree-compile`` with
    the case's flags (then ``iree-run-module`` on its inputs, for a crash at run)."""
    from iree_conformance.repro.spec import ReproSpec

    result = report.result
    source = result.candidate.model.SerializeToString()
    return ReproSpec(
        case_id=outcome.case_id,
        target=target.name,
        kind=str(outcome.failure_kind),
        stage=str(outcome.stage),
        first_line=report.signature.first_line,
        compile_flags=flags,
        device=target.device_uri,
        function=result.candidate.model.graph.name or "main",
        onnx=source,
        import_line=import_line(outcome, source),
        inputs=list(result.candidate.inputs),
        diagnostics=[report.signature.first_line],
        notes=[
            f"Reduced from {result.nodes_before} to {result.nodes_after} nodes (counted with "
            f"their subgraphs'; {', '.join(result.op_types)}) by iree-conformance's graph "
            f"reduction in {result.elapsed_s:.1f} s."
        ],
    )


def _merge_record(path: Path, extra: dict[str, Any]) -> None:
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data["reproducer"] = {k: v for k, v in extra.items() if k in ("reproduced", "why")}
    atomic_write_text(path, json.dumps(data, indent=1) + "\n")


__all__ = [
    "DEFAULT_BUDGET_S",
    "REDUCED",
    "add_budget_argument",
    "progress_bar",
    "reduced_graph_spec",
    "write_graph_folder",
    "write_reduced_repro",
]
