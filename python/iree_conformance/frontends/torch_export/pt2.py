"""A ``.pt2`` file (an ExportedProgram saved by ``torch.export.save``) as a torch case:
loaded, given the same preparation as a module's export (``export.prepare``: loaded as
saved it can hold in-place ops and ``detach_``, which IREE's importer rejects), run by
torch eager (``ExportedProgram.module()``) on the example inputs saved with it, or on
seeded random ones of its input shapes when it saved none.

``Pt2Error`` is bad input (the file is no ExportedProgram, is damaged, was saved by a
torch this one cannot read, or holds unusable inputs): its message names the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from iree_conformance.common.store import ArtifactStore, make_key
from iree_conformance.frontends.torch_export.artifact import Exported

EXPORT_KIND = "torch-pt2-export"
CORE_KIND = "torch-pt2-core-export"  # the program under torch's core decompositions


class Pt2Error(Exception):
    """The file cannot be checked; the message names it and says why."""


def _reason(e: BaseException) -> str:
    lines = [line for line in str(e).strip().splitlines() if line.strip()]
    return f"{type(e).__name__}: {' '.join(lines[:3]) or '(no message)'}"


def load(path: Path) -> Any:
    import torch

    if not path.is_file():
        raise Pt2Error(f"{path}: no such file")
    import zipfile

    if not zipfile.is_zipfile(path):
        raise Pt2Error(
            f"{path}: not a .pt2 archive (torch.export.save writes a zip file): save the "
            "program with torch.export.save(torch.export.export(module, args), PATH)"
        )
    from iree_conformance.frontends.torch_export import pt2_guard

    try:
        pt2_guard.check(path)
    except (pt2_guard.UnsafeArchive, zipfile.BadZipFile, OSError) as e:
        raise Pt2Error(
            f"{path}: refused before loading: {e}; a .pt2 may hold only a program as "
            "torch.export.save writes it (docs/torch.md)"
        ) from None
    try:
        with _quiet_loader() as said, pt2_guard.weights_only():
            program = torch.export.load(str(path))
    except Exception as e:  # noqa: BLE001 - any failure to read it is the file's
        message = _reason(e)
        if said:  # torch logs the deserializer's own error and raises a generic one
            message = said[-1]
        if "Weights only load failed" in message:
            raise Pt2Error(
                f"{path}: refused: it holds a pickle of more than tensors, which loading "
                "would run (torch's weights_only loading refuses it); a .pt2 may hold only "
                "a program as torch.export.save writes it (docs/torch.md)"
            ) from None
        hint = ""
        if "version" in message.lower():
            hint = (
                f" (this is torch {torch.__version__}: save the program again with it, or "
                "check it with the torch that saved it)"
            )
        raise Pt2Error(f"{path}: torch.export.load cannot read it: {message}{hint}") from None
    if not isinstance(program, torch.export.ExportedProgram):
        raise Pt2Error(f"{path}: holds a {type(program).__name__}, not an ExportedProgram")
    return program


@contextlib.contextmanager
def _quiet_loader() -> Iterator[list[str]]:
    """torch.export.load logs a deserializing error's traceback as a warning: kept here,
    as its last line, instead of printed."""
    import logging

    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.exc_info and record.exc_info[1] is not None:
                said.append(_reason(record.exc_info[1]))
            else:
                said.append(record.getMessage().splitlines()[0] if record.getMessage() else "")

    logger = logging.getLogger("torch.export")  # torch gives it its own stderr handler
    handlers, propagate = list(logger.handlers), logger.propagate
    logger.handlers = [Keep()]
    logger.propagate = False
    try:
        yield said
    finally:
        logger.handlers = handlers
        logger.propagate = propagate


def _example_inputs(program: Any, path: Path) -> tuple[tuple[Any, ...], str]:
    """The saved example inputs, else seeded random ones of the input shapes."""
    import torch

    saved = getattr(program, "example_inputs", None)
    if saved is not None:
        args, kwargs = saved
        if kwargs:
            raise Pt2Error(
                f"{path}: its example inputs pass keywords ({', '.join(kwargs)}), which IREE's function does not take"
            )
        return tuple(args), "saved with the program"
    g = torch.Generator().manual_seed(0)
    args = []
    for spec in program.graph_signature.input_specs:
        if spec.kind.name != "USER_INPUT":
            continue
        value = next(
            n for n in program.graph.nodes if n.op == "placeholder" and n.name == spec.arg.name
        ).meta.get("val")
        if value is None or not hasattr(value, "shape"):
            raise Pt2Error(
                f"{path}: input {spec.arg.name} is not a tensor and the file holds no example inputs"
            )
        shape = [int(getattr(d, "node", d).hint if hasattr(d, "node") else d) for d in value.shape]
        if value.dtype.is_floating_point:
            args.append((torch.rand(shape, generator=g) * 2 - 1).to(value.dtype))
        elif value.dtype == torch.bool:
            args.append(torch.rand(shape, generator=g) < 0.5)
        else:
            args.append(torch.randint(0, 10, shape, generator=g).to(value.dtype))
    return tuple(args), "seeded random (seed 0; the file holds no example inputs)"


def export_pt2(path: Path) -> Exported:
    """The program prepared and imported, with torch eager's outputs. Raises Pt2Error for
    a file that cannot be checked, export.ExportError for a preparation that fails."""
    from iree_conformance.frontends.torch_export import export

    program = load(path)
    args, source = _example_inputs(program, path)
    try:
        expected = export.eager(program.module(), args)
    except export.ExportError as e:
        raise Pt2Error(f"{path}: {e}") from None
    exported = export.exported_program(program, args, expected)
    exported.info["inputs"]["source"] = source
    return exported


def _key(path: Path) -> str:
    from iree_conformance.frontends.torch_export import export, folder

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return make_key(
        "torch-pt2", folder.source_digest(), json.dumps(export.versions(), sort_keys=True), digest
    )


def cached_export(path: Path, store: ArtifactStore) -> bytes:
    """The export's payload (a failure's JSON, as ``folder.export_listed`` stores), from the
    store when the same file was exported by the same versions; the export runs in a
    child under its time limit (``case_folder.bounded_call``)."""
    from iree_conformance.frontends import case_folder

    key = _key(path)
    entry = store.get(EXPORT_KIND, key)
    if entry is not None:
        return entry[1]
    bad, payload = case_folder.bounded_call(_export_payload, (path,), str(path))
    if bad:
        raise Pt2Error(payload.decode("utf-8"))
    store.put(EXPORT_KIND, key, payload, {"file": path.name})
    return payload


def _export_payload(path: Path) -> tuple[bool, bytes]:
    """(True, a Pt2Error's message) or (False, the export's payload): run in a child."""
    from iree_conformance.frontends.torch_export import export, folder

    try:
        return False, export_pt2(path).to_bytes()
    except Pt2Error as e:
        return True, str(e).encode("utf-8")
    except export.ExportError as e:
        return False, folder.failure_payload(e.stage, f"{path}: {e}", e.core_mlir)


def cached_core_export(path: Path, store: ArtifactStore) -> bytes:
    """The saved program prepared with torch's core decompositions instead (its payload,
    ``folder.core_text`` reads it), from the store when made by the same versions."""
    from iree_conformance.frontends.torch_export import export, folder

    key = _key(path)
    entry = store.get(CORE_KIND, key)
    if entry is not None:
        return entry[1]
    try:
        payload = export.core_prepared(load(path)).encode("utf-8")
    except (export.ExportError, Pt2Error) as e:
        payload = folder.failure_payload("import", f"{path}: {e}")
    store.put(CORE_KIND, key, payload, {"file": path.name})
    return payload
