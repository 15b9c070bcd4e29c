"""The MLIR op reduction's reproducer: a failing program's ``input.mlir`` cut down
(frontends/mlir_reduce.py) and written as a reproducer folder of its own.

Any case that fails to compile, or crashes the compiler, is an MLIR program by then
(StableHLO, JAX, torch, ONNX after import): its reproducer folder holds that program
(``input.mlir``) and the flags IREE compiled it with (``compile.flags``). Each candidate
is compiled alone with those flags through the worker and the store
(``engine.reduction.same_mlir_failure``); the smallest that fails the same way (stage
and normalized first line) becomes ``reduced/``, written and verified as any reproducer
is (``writer.write``: ``input.mlir``, flags, ``repro.sh``, ``repro.cmd``, ISSUE.md that
says "reduced from N to M ops", verified with IREE's tools alone), with
``reduction.json`` beside.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.common.store import ArtifactStore
from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.engine.reduction import same_mlir_failure, signature_of
from iree_conformance.frontends.mlir_reduce import MlirReduction, MlirReductionError, reduce_mlir
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.targets import Target
from iree_conformance.repro import writer
from iree_conformance.repro.source import public_functions
from iree_conformance.repro.spec import INPUT_MLIR, ReproSpec
from iree_conformance.repro.versions import version_info

__all__ = ["mlir_reducible_reason", "reduce_mlir_program", "reduced_spec", "write_reduced_mlir"]

REDUCED = "reduced"
REDUCTION_FILE = "reduction.json"
#: An ONNX model's imported program, reduced op by op beside its graph's ``reduced/``.
REDUCED_IMPORTED = "reduced-mlir"
#: --sources' dump flags (spec.compile_flags_text): no part of how the program compiles.
_DUMP_FLAGS = ("--iree-hal-dump-executable-", "--dump-compilation-phases-to=")


def mlir_reducible_reason(outcome: Outcome) -> str | None:
    """Why the MLIR op reduction does not take this failure; None when it does."""
    if outcome.stage == Stage.COMPILE and outcome.status in (Status.ERROR, Status.CRASH):
        return None
    return (
        f"a failure at {outcome.stage} ({outcome.status}) is not reduced at the MLIR level: it "
        "takes compile failures and compiler crashes"
    )


def reduce_mlir_program(
    text: str,
    flags: tuple[str, ...],
    outcome: Outcome,
    target: Target,
    worker: Any,
    budget_s: float | None,
    progress: Any = None,
) -> tuple[MlirReduction, list[str]]:
    """The smallest part of ``text`` that fails as ``outcome`` says, each candidate
    compiled with ``flags`` through the worker (and so the store), and its own
    diagnostics (its line numbers and names, not the whole program's)."""
    signature = signature_of(outcome.status, outcome.stage, outcome.diagnostics)
    if signature is None:
        raise MlirReductionError("the program passes: nothing to reduce")
    seen: dict[str, list[str]] = {}
    fails = same_mlir_failure(
        outcome.case_id, outcome.suite, flags, target, worker, signature, seen
    )
    found = reduce_mlir(text, fails, budget_s, progress, signature.first_line)
    return found, seen.get(found.text) or list(outcome.diagnostics)


def reduced_spec(
    found: MlirReduction,
    case_id: str,
    target: Target,
    outcome: Outcome,
    flags: tuple[str, ...],
    diagnostics: list[str],
) -> ReproSpec:
    """The reduced program as a reproducer (a compile failure stops at compile), with its
    own diagnostics."""
    functions = public_functions(found.text)
    first = next((d for d in diagnostics if d.strip()), "")
    return ReproSpec(
        case_id=case_id,
        target=target.name,
        kind="crash" if outcome.status == Status.CRASH else "fail-compile",
        stage=str(Stage.COMPILE),
        first_line=first.strip(),
        compile_flags=flags,
        device=target.device_uri,
        function=functions[0] if functions else "main",
        mlir=found.text.encode("utf-8"),
        diagnostics=list(diagnostics),
        notes=[
            f"Reduced from {found.ops_before} to {found.ops_after} ops "
            f"({', '.join(found.op_names)}) by iree-conformance's MLIR reduction in "
            f"{found.elapsed_s:.1f} s ({found.tested} candidates compiled)"
            + ("" if found.complete else "; the budget ran out first, so it is not minimal")
            + "."
        ],
    )


def write_reduced_mlir(
    found: MlirReduction,
    spec: ReproSpec,
    out: Path,
    store: ArtifactStore | None,
    tools: str | None,
    force: bool = False,
) -> dict[str, Any]:
    """Writes and verifies the reduced folder ``out`` and its ``reduction.json``; returns
    what reduction.json records."""
    record = writer.write(spec, out, version_info(), force=force, tools_path=tools, store=store)
    verification = record.get("verification") or {}
    summary = {
        "kind": "mlir-ops",
        "case": spec.case_id,
        "target": spec.target,
        "signature": {"stage": spec.stage, "first_line": spec.first_line},
        **{k: v for k, v in dataclasses.asdict(found).items() if k != "text"},
        "elapsed_s": round(found.elapsed_s, 3),
        "summary": found.summary(),
        "reproducer": {
            "reproduced": record.get("reproduced"),
            "why": verification.get("why"),
        },
    }
    atomic_write_text(out / REDUCTION_FILE, json.dumps(summary, indent=1, default=str) + "\n")
    return summary


def reduce_folder(
    folder: Path,
    outcome: Outcome,
    target: Target,
    worker: Any,
    store: ArtifactStore | None,
    budget_s: float | None,
    tools: str | None,
    progress: Any = None,
    force: bool = False,
    name: str = REDUCED,
) -> dict[str, Any]:
    """``repro --reduce`` of a program that is MLIR when it fails: the folder's
    ``input.mlir`` and ``compile.flags`` reduced into ``folder/<name>`` (``reduced``;
    an ONNX model's imported program: ``reduced-mlir``, beside its graph's)."""
    why = mlir_reducible_reason(outcome)
    if why is not None:
        return {"note": why}
    text = (folder / INPUT_MLIR).read_text(encoding="utf-8")
    lines = (folder / "compile.flags").read_text(encoding="utf-8").splitlines()
    flags = tuple(line for line in lines if line and not line.startswith(_DUMP_FLAGS))
    try:
        found, diagnostics = reduce_mlir_program(
            text, flags, outcome, target, worker, budget_s, progress
        )
    except MlirReductionError as e:
        return {"note": f"not reduced: {e}"}
    spec = reduced_spec(found, outcome.case_id, target, outcome, flags, diagnostics)
    return write_reduced_mlir(found, spec, folder / name, store, tools, force)
