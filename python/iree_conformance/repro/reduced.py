"""``repro --reduce``: the reproducer folder's ``reduced/``, the smallest part of an ONNX
model that fails the same way (engine/reduction.py), with a reproducer of its own.

An import, compile or crash failure's reduced model gets ``reduced/repro.sh`` and
``repro.cmd``: ``iree-import-onnx`` then ``iree-compile`` with the case's own
``compile.flags`` (copied beside it), nothing else; it is run in a clean subprocess with
only IREE's tools on ``PATH``, as the folder's own reproducer is, and ``reduction.json``
says whether it showed the same stage and first line. A numerics failure's first
diverging node is written as a model of its own with the values it saw; whether IREE
alone shows the mismatch on it is the reduction's own check (its ``note``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.common.vocabulary import Status
from iree_conformance.model.cases import Case
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.targets import Target
from iree_conformance.repro import verify
from iree_conformance.repro.source import import_line
from iree_conformance.repro.spec import CD_TO_FOLDER, INPUT_MLIR, MODEL_ONNX, MODULE_FILE

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


def progress_bar():
    """A tqdm bar on a terminal (stderr), nothing elsewhere: (callback, close)."""
    from tqdm import tqdm

    bar = tqdm(desc="reducing", unit=" candidates", disable=not sys.stderr.isatty(), leave=False)

    def update(tested: int, smallest: int) -> None:
        bar.n = tested
        bar.set_postfix_str(f"smallest {smallest} nodes", refresh=True)

    return update, bar.close


def reduced_scripts(import_words: list[str]) -> tuple[str, str]:
    """(repro.sh, repro.cmd) of a reduced model: import, then compile with the case's flags."""
    words = " ".join(import_words)
    sh = "\n".join(
        [
            "#!/bin/sh",
            "# The reduced model, imported and compiled as the case was (compile.flags).",
            CD_TO_FOLDER,
            f"{words} || exit $?",
            f"iree-compile @{COMPILE_FLAGS} {INPUT_MLIR} -o {MODULE_FILE}",
        ]
    )
    cmd = "\r\n".join(
        [
            "@echo off",
            "rem The reduced model, imported and compiled as the case was (compile.flags).",
            'cd /d "%~dp0"',
            f"{words} || exit /b 1",
            f"iree-compile @{COMPILE_FLAGS} {INPUT_MLIR} -o {MODULE_FILE}",
        ]
    )
    return sh + "\n", cmd + "\r\n"


def shows_same_failure(ran: dict[str, Any], stage: str, first_line: str, crash: bool) -> bool:
    """Whether a reduced reproducer's run failed at the case's stage the same way."""
    if ran.get("timed_out") or ran.get("returncode") in (0, None):
        return False
    if ran.get("stage") != verify.stage_of(stage):
        return False
    if crash:
        return verify.signalled(ran.get("returncode"))
    return verify.has_line(first_line, ran.get("output") or [])


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
    write_reduced(report, folder, target)
    reduced = folder / REDUCED
    if report.result is None or report.signature is None:
        return record  # numerics: the isolation's own check says whether IREE alone shows it
    shutil.copyfile(folder / COMPILE_FLAGS, reduced / COMPILE_FLAGS)
    source = (reduced / MODEL_ONNX).read_bytes()
    words = import_line(outcome, source)
    sh, cmd = reduced_scripts(words)
    atomic_write_text(reduced / "repro.sh", sh)
    atomic_write_text(reduced / "repro.cmd", cmd)
    (reduced / "repro.sh").chmod(0o755)
    crash = outcome.status == Status.CRASH
    try:
        found = shutil.which("iree-import-onnx", path=tools)
        compiler = shutil.which("iree-compile", path=tools)
        if not found or not compiler:
            raise verify.ToolsMissing("iree-import-onnx or iree-compile is not on PATH")
        tools_path = Path(found).parent
        ran = verify.run_reproducer(reduced, tools_path, VERIFY_TIMEOUT_S)
    except verify.ToolsMissing as e:
        record["reproduced"] = None
        record["why"] = str(e)
    else:
        record["reproduced"] = shows_same_failure(
            ran, str(outcome.stage), report.signature.first_line, crash
        )
        record["why"] = (
            f"the reduced model fails at {ran.get('stage')} with the case's first line"
            if record["reproduced"]
            else f"the reduced model's run did not show it (stage {ran.get('stage')}, "
            f"exit {ran.get('returncode')})"
        )
    _merge_record(reduced / "reduction.json", record)
    return record


def _merge_record(path: Path, extra: dict[str, Any]) -> None:
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data["reproducer"] = {k: v for k, v in extra.items() if k in ("reproduced", "why")}
    atomic_write_text(path, json.dumps(data, indent=1) + "\n")


__all__ = [
    "DEFAULT_BUDGET_S",
    "REDUCED",
    "add_budget_argument",
    "progress_bar",
    "reduced_scripts",
    "shows_same_failure",
    "write_reduced_repro",
]
