"""A failing case's ``ReproSpec``: its program as compiled alone, its flags, its arrays.

The MLIR is the store's import of the case (the worker stored it when it compiled the
case alone, ``engine/worker/store.py``), else the case's frontend imports it now; nothing
is compiled here. An ONNX import failure keeps the model and the ``iree-import-onnx``
line instead. A self-checking program's check ops are rewritten by the harness into calls
of its own recording module, which IREE's tools cannot provide: for a failure after the
compile its folder holds the program as written (``iree-run-module`` ignores check ops).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from iree_conformance.common.platform_info import cpu_fingerprint, host_arch
from iree_conformance.common.store import ArtifactStore
from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.engine.worker.runtime import resolve_entry
from iree_conformance.engine.worker.store import ModuleCache
from iree_conformance.frontends.registry import FrontendError, ImportContext, frontend_for
from iree_conformance.model.cases import Case
from iree_conformance.model.compare import Tolerance
from iree_conformance.model.jobs import LARGE_MODEL_OPTION
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.preparation import bare_defaults_line, preparation_steps
from iree_conformance.model.targets import Target
from iree_conformance.report.model import first_line
from iree_conformance.repro.spec import (
    FLOAT8_MISMATCH_NOTE,
    INPUT_MLIR,
    MODEL_ONNX,
    PARAMS_FILE,
    ReproSpec,
    has_float8,
)

_FUNC = re.compile(
    r'^\s*func\.func\s+(public\s+)?(private\s+)?@("(?:[^"\\]|\\.)*"|[\w$.\-]+)', re.MULTILINE
)
MIN_ONNX_OPSET = 17  # frontends/onnx/prepare.MIN_IREE_OPSET: the harness upgrades older models


#: An imported ONNX program over this size has its weights inline in input.mlir.
LARGE_MLIR_BYTES = 256 * 1024 * 1024


def large_weights_note(size: int) -> str:
    """Why a large model's weights are inline, and how IREE's tools keep them out."""
    return (
        f"input.mlir is {size / 2**20:.0f} MiB with the weights inline: the harness imports in "
        "process and compiles the weights as constants, and a parameter file would be another "
        "program. To keep them out as IREE's tools do: iree-import-onnx model.onnx "
        "--externalize-params --save-params-to params.irpa -o input.mlir, then add "
        "--parameters=model=params.irpa to run.flags."
    )


def public_functions(mlir: str) -> list[str]:
    names = []
    for m in _FUNC.finditer(mlir):
        if m.group(2):
            continue
        name = m.group(3)
        names.append(name[1:-1] if name.startswith('"') else name)
    return names


def _source(case: Case) -> bytes:
    program = case.program()
    if program.source_bytes is not None:
        return program.source_bytes
    return Path(program.source_path or "").read_bytes()


def _host(target: Target) -> str:
    return cpu_fingerprint() if target.host_specific else host_arch()


def imported_mlir(
    case: Case, target: Target, store: ArtifactStore
) -> tuple[bytes, bool, dict[str, Any]]:
    """(the case's MLIR as the harness compiled it, whether it came from the store, its
    import metadata: ``parameters`` names a parameter file, ``engine/worker/params.py``)."""
    program, source = case.program(), _source(case)
    import_key, _ = ModuleCache.keys(program, source, target.case_flags(case), _host(target))
    cache = ModuleCache(store)
    hit = store.get("mlir", import_key)
    if hit is not None and cache.params.present(hit[0]):
        return hit[1], True, hit[0]
    holder: dict[str, Any] = {}

    def context():
        if "session" not in holder:
            from iree.compiler.api import Session

            holder["session"] = Session()
        return holder["session"].context

    try:
        mlir, meta = frontend_for(program).prepare_and_import(
            program,
            source,
            ImportContext(lambda _stage: None, context, lambda: "", cache.params.work_dir()),
        )
    except FrontendError as e:
        raise RuntimeError(f"the case's import failed here ({e.stage}): {e}") from None
    meta = cache.params.keep(import_key, meta)
    store.put("mlir", import_key, mlir, meta)
    return mlir, False, meta


def _large_model_notes(case: Case, spec: ReproSpec, meta: dict[str, Any], store) -> None:
    """A model over 2 GiB: run.flags names its parameter file, or the folder says why not."""
    file = ModuleCache(store).params.runtime_parameters(meta)
    if file is None:
        spec.notes.append(
            "The model is over 2 GiB and its weights are a parameter file that is not in the "
            "store: run.flags cannot name it; make it with " + " ".join(large_import_line(case))
        )
        return
    scope, path = file
    spec.parameters, spec.parameters_file = f"{scope}={PARAMS_FILE}", str(path)
    spec.notes.append(
        f"The model is over 2 GiB: its weights are not in input.mlir but in {PARAMS_FILE} "
        "(made by iree-import-onnx --externalize-params), which run.flags names with "
        "--parameters."
    )


def large_import_line(case: Case) -> list[str]:
    """iree-import-onnx's command for a model over 2 GiB, on the model where it lies (its
    external data is beside it; the tool's --data-dir is a pathlib.Path that onnx 1.17+
    refuses, so the line names the model's own path instead)."""
    from iree_conformance.frontends.onnx.large_import import import_line

    return import_line(str(Path(case.program().source_path or MODEL_ONNX).resolve()))


def _onnx_opset(source: bytes) -> int | None:
    try:
        import onnx

        model = onnx.load_from_string(source)
        return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    except Exception:  # noqa: BLE001 - an unreadable model: the harness's own error says it
        return None


def import_line(outcome: Outcome, source: bytes) -> list[str]:
    """The ``iree-import-onnx`` command of an import failure, with the opset upgrade the
    harness made (``info.opset_to``; from the model when the Outcome does not say)."""
    opset_from, opset_to = outcome.info.get("opset_from"), outcome.info.get("opset_to")
    if opset_to is None:
        model_opset = _onnx_opset(source)
        if model_opset is not None and model_opset < MIN_ONNX_OPSET:
            opset_from, opset_to = model_opset, MIN_ONNX_OPSET
    line = ["iree-import-onnx", MODEL_ONNX]
    if opset_to is not None and opset_from is not None and opset_from != opset_to:
        line += ["--opset-version", str(opset_to)]
    return [*line, "-o", INPUT_MLIR]


def _tolerances(
    case: Case, manifest: Tolerance | None, expected: list[np.ndarray]
) -> tuple[list, list[str]]:
    tol = manifest.merged_over(case.tolerance) if manifest is not None else case.tolerance
    notes = []
    if tol.max_ulp is not None:
        notes.append(
            f"The harness compares in ULPs (max {tol.max_ulp}); IREE's tools compare by atol/rtol, set to the dtype's defaults here."
        )
    if tol.grids and any(g is not None for g in tol.grids):
        notes.append(
            "The harness judges some outputs on their quantization grid; IREE's tools compare them exactly or by atol/rtol."
        )
    return [tol.resolve(np.asarray(e).dtype) for e in expected], notes


def _frontend_notes(case: Case, outcome: Outcome) -> list[str]:
    """What input.mlir is when the harness made it in Python, and what the other
    preparation did (``engine/preparations.py``)."""
    notes = []
    if case.program().frontend == "torch_export":
        notes.append(
            "input.mlir is the torch-dialect program iree-turbine's FX importer wrote: the "
            "case exported with torch.export and prepared with iree-turbine's AOT "
            "decompositions (functionalized), as aot.export prepares a module; the "
            "expected outputs are torch eager's."
        )
    said = (outcome.info.get("preparations") or {}).get("summary")
    if said:
        notes.append(f"Preparation: {said}.")
    steps = outcome.info.get("preparation") or preparation_steps(outcome.info)
    if steps:
        notes.append("Beyond the file as given, the harness: " + "; ".join(steps) + ".")
    bare = bare_defaults_line(outcome.info)
    if bare:
        notes.append(bare + ".")
    return notes


def build_spec(
    case: Case,
    target: Target,
    outcome: Outcome,
    store: ArtifactStore,
    manifest_tolerance: Tolerance | None = None,
    kind: str | None = None,
) -> ReproSpec:
    """The reproducer of one Outcome (``kind``: "pass" for --sources of a passing case)."""
    kind = kind or outcome.failure_kind or "pass"
    stage = str(outcome.stage)
    source = _source(case)
    spec = ReproSpec(
        case_id=case.case_id,
        target=target.name,
        kind=kind,
        stage=stage,
        first_line=first_line(outcome.to_json()),
        compile_flags=target.case_flags(case),
        device=target.device_uri,
        function=case.entry_function or "main",
        diagnostics=list(outcome.diagnostics),
    )
    own = case.own_reproducer()
    if own is not None:  # a case that ran itself (a generation check)
        spec.mlir, spec.inputs, spec.function = own["mlir"], list(own["inputs"]), "main"
        spec.notes += list(own.get("notes", ()))
        if kind == "fail-numerics" and own.get("expected") is not None:
            spec.expected = list(own["expected"])
            spec.tolerances = [own.get("tolerance")] * len(spec.expected)
        return spec
    large = bool(case.import_options.get(LARGE_MODEL_OPTION))
    if case.kind == "onnx" and stage in (Stage.PREPARE, Stage.IMPORT) and large:
        spec.onnx, spec.import_line = source, large_import_line(case)
        spec.notes.append(
            "The model is over 2 GiB: the harness imports it with iree-import-onnx --large-model --externalize-params, as the folder's line does, on the model in its own folder (its external data is not copied; model.onnx is its graph)."
        )
        return spec
    if case.kind == "onnx" and stage in (Stage.PREPARE, Stage.IMPORT):
        spec.onnx, spec.import_line = source, import_line(outcome, source)
        spec.notes.append(
            "The harness imports ONNX in process (IREE's importer, after onnx's opset upgrade); the folder holds the model and the iree-import-onnx line, which needs the onnx package."
        )
        return spec
    self_checking = bool(case.import_options.get("rewrite_checks"))
    if self_checking and stage not in (Stage.IMPORT, Stage.COMPILE):
        spec.mlir = source
        spec.notes.append(
            "A self-checking program: the harness rewrites its check ops into calls of its own recording module; the folder holds the program as written, whose check ops iree-run-module ignores, so a wrong value does not fail the run."
        )
    else:
        spec.mlir, from_store, meta = imported_mlir(case, target, store)
        spec.context["mlir_from_store"] = from_store
        if large:
            _large_model_notes(case, spec, meta, store)
    spec.notes += _frontend_notes(case, outcome)
    if case.kind == "onnx" and len(spec.mlir) > LARGE_MLIR_BYTES:
        spec.notes.append(large_weights_note(len(spec.mlir)))
    names = public_functions(spec.mlir.decode("utf-8", errors="replace"))
    spec.function = resolve_entry(case.entry_function, names)
    if stage in (Stage.IMPORT, Stage.COMPILE) and kind != Status.PASS:
        return spec
    try:
        sets = case.input_sets()
    except Exception as e:  # noqa: BLE001 - the folder still shows the compile
        spec.notes.append(f"The case's inputs could not be made here: {type(e).__name__}: {e}")
        return spec
    if sets:
        spec.inputs = [np.asarray(a) for a in sets[0]]
        if len(sets) > 1:
            spec.notes.append(f"The case runs {len(sets)} input sets; the folder holds the first.")
    if kind == "fail-numerics" and not self_checking:
        try:
            expected = case.expected_sets(sets)[0]
        except Exception as e:  # noqa: BLE001 - no reference here: the run still shows the outputs
            spec.notes.append(
                f"The reference's outputs could not be made here: {type(e).__name__}: {e}"
            )
            return spec
        spec.expected = [np.asarray(e) for e in expected]
        spec.tolerances, notes = _tolerances(case, manifest_tolerance, spec.expected)
        spec.notes += notes
        if has_float8(spec.expected):
            spec.notes.append(FLOAT8_MISMATCH_NOTE)
    return spec
