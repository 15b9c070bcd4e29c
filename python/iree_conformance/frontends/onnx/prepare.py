"""The ``prepare`` and ``import`` stages for ONNX models.

``prepare_model`` loads a model, rejects malformed ones with a ``PrepareError`` that
says what is wrong, and upgrades old opsets: IREE's ONNX lowering targets recent
opsets, and models below ``MIN_IREE_OPSET`` (for example the Model Zoo's opset-9
``light_resnet50``) fail there until ``onnx.version_converter`` lifts them to 17.
``import_to_mlir`` runs IREE's in-process ONNX importer (the same steps as the
``iree-import-onnx`` tool: shape inference, ModelInfo, NodeImporter, verify).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx
import onnx.checker
import onnx.shape_inference
import onnx.version_converter

__all__ = [
    "DEFAULT_DOMAINS",
    "MIN_IREE_OPSET",
    "OnnxImportError",
    "PrepareError",
    "PreparedModel",
    "default_opset",
    "external_data_bytes",
    "graph_tensors",
    "import_to_mlir",
    "large_model_size",
    "load_model",
    "prepare_model",
]

#: Models whose default-domain opset is below this are upgraded before import.
MIN_IREE_OPSET = 17
DEFAULT_DOMAINS = ("", "ai.onnx")
# Protobuf cannot serialize a single message over 2 GiB; the checker and in-memory
# shape inference need the on-disk path beyond that.
_PROTOBUF_LIMIT = 2**31 - 1
_MAX_DIAGNOSTIC_LINES = 8


class PrepareError(Exception):
    """The model cannot be loaded, is malformed, or its opset cannot be upgraded."""


class OnnxImportError(Exception):
    """IREE's ONNX importer rejected the model; the message holds its first errors."""


@dataclass
class PreparedModel:
    """A checked model, upgraded to at least ``MIN_IREE_OPSET`` where needed."""

    model: onnx.ModelProto
    original_opset: int | None  # default-domain opset as loaded; None if not imported
    opset: int | None  # default-domain opset after preparation
    upgraded: bool
    source: str  # the path or a label, for messages

    def info(self) -> dict[str, Any]:
        """Fields for an Outcome's ``info``."""
        return {"opset_from": self.original_opset, "opset_to": self.opset}


def _first_lines(text: str | BaseException, limit: int = _MAX_DIAGNOSTIC_LINES) -> str:
    lines = [line.rstrip() for line in str(text).strip().splitlines() if line.strip()]
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more lines)"]
    return "\n".join(lines)


def graph_tensors(graph: onnx.GraphProto):
    """Every tensor of a graph and its subgraphs: initializers and attribute tensors."""
    yield from graph.initializer
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            if attribute.HasField("g"):
                yield from graph_tensors(attribute.g)
            for sub in attribute.graphs:
                yield from graph_tensors(sub)


def _gib(size: int) -> str:
    return f"{size / 2**30:.2f} GiB" if size >= 2**30 else f"{size:,} bytes"


def inside_folder(base: Path, location: str) -> Path | None:
    """The external data file ``location`` names, resolved, when it lies inside the
    (resolved) folder ``base``; None for an empty, absolute or escaping location."""
    target = (base / location).resolve()
    if not location or Path(location).is_absolute() or not target.is_relative_to(base):
        return None
    return target


def external_data_bytes(model: onnx.ModelProto, base_dir: Path, label: str) -> int:
    """The bytes the model's external data would bring into memory, read from the tensors'
    records and the files' sizes only (no data is read). Each file must lie inside
    ``base_dir`` and hold what its tensor declares (shape times element size, at its
    offset); a ``PrepareError`` names the tensor otherwise."""
    from onnx.external_data_helper import uses_external_data

    base = base_dir.resolve()
    total = 0
    for t in graph_tensors(model.graph):
        if not uses_external_data(t):
            continue
        info = {e.key: e.value for e in t.external_data}
        location = info.get("location", "")
        target = inside_folder(base, location)
        if target is None:
            raise PrepareError(
                f"{label}: tensor {t.name!r} keeps its data at {location!r}, outside the "
                f"model's folder {base_dir}; external data files must lie beside the model"
            )
        if not target.is_file():
            raise PrepareError(
                f"{label}: initializer {t.name!r} is stored in external data file "
                f"{location!r}, which is not in {base_dir}: put it beside the model"
            )
        try:
            offset = int(info.get("offset") or 0)
            length = int(info["length"]) if info.get("length") else None
        except ValueError:
            raise PrepareError(
                f"{label}: tensor {t.name!r}: external data offset {info.get('offset')!r} or "
                f"length {info.get('length')!r} is not a number"
            ) from None
        size = target.stat().st_size
        itemsize = _itemsize(t.data_type)
        count = 1
        for d in t.dims:
            count *= d
        declared = count * itemsize if itemsize and min(t.dims, default=0) >= 0 else None
        need = length if length is not None else declared if declared is not None else size - offset
        if offset < 0 or need < 0 or offset + need > size:
            raise PrepareError(
                f"{label}: tensor {t.name!r} declares {need:,} bytes of external data at "
                f"offset {offset:,} of {location!r}, which holds {size:,} bytes: the file is "
                "truncated or the model's record is wrong"
            )
        if declared is not None and length is not None and declared != length:
            raise PrepareError(
                f"{label}: tensor {t.name!r} has shape {list(t.dims)} ({declared:,} bytes) but "
                f"its external data record says {length:,} bytes"
            )
        total += need
    return total


def _itemsize(data_type: int) -> int | None:
    try:
        return int(onnx.helper.tensor_dtype_to_np_dtype(data_type).itemsize) or None
    except Exception:  # noqa: BLE001 - strings and unknown types: no fixed size
        return None


def large_model_size(path: Path, model: onnx.ModelProto | None = None) -> int | None:
    """None for a model protobuf can hold as one message; for one over 2 GiB with its
    external data, its size, after ``onnx.checker`` checked it by path without loading
    the data (a ``PrepareError`` when the checker rejects it). Such a model is imported
    by ``iree-import-onnx --large-model`` (``large_import.py``), not in process."""
    path = Path(path)
    if model is None:
        model = onnx.load(str(path), load_external_data=False)
    label = str(path)
    total = external_data_bytes(model, path.parent, label) + model.ByteSize()
    if total <= _PROTOBUF_LIMIT:
        return None
    try:
        onnx.checker.check_model(str(path))
    except Exception as e:  # onnx.checker.ValidationError and friends
        raise PrepareError(f"{label}: onnx.checker rejects the model: {_first_lines(e, 4)}") from e
    return total


def _load_external(model: onnx.ModelProto, base_dir: Path, label: str) -> None:
    """Loads the external data files a model read from bytes names, from base_dir; a model
    whose data would take it over protobuf's 2 GiB is refused before anything is read."""
    from onnx.external_data_helper import load_external_data_for_model

    total = external_data_bytes(model, base_dir, label)
    if not total:
        return
    if total + model.ByteSize() > _PROTOBUF_LIMIT:
        raise PrepareError(
            f"{label}: {_gib(total)} of external data, over the 2 GiB protobuf holds in one "
            "message: IREE's in-process importer cannot take it (iree-import-onnx "
            "--large-model --externalize-params can)"
        )
    try:
        load_external_data_for_model(model, str(base_dir))
    except Exception as e:
        raise PrepareError(f"{label}: cannot load its external data: {_first_lines(e, 3)}") from e


def load_model(
    source: Path | str | bytes | onnx.ModelProto, base_dir: Path | None = None
) -> tuple[onnx.ModelProto, str]:
    """Load a model from a path, serialized bytes or a proto; return it and a label.

    Bytes read from a file that keeps tensors in external data files need ``base_dir``,
    the file's folder."""
    if isinstance(source, onnx.ModelProto):
        return source, f"model {source.graph.name or '<unnamed>'}"
    if isinstance(source, (bytes, bytearray, memoryview)):
        label = f"<{len(source)} bytes of model>"
        model = onnx.ModelProto()
        try:
            model.ParseFromString(bytes(source))
        except Exception as e:  # google.protobuf.message.DecodeError
            raise PrepareError(
                f"{label}: not a valid ONNX protobuf (truncated or corrupt?): {e}"
            ) from e
        if base_dir is not None:
            _load_external(model, Path(base_dir), label)
        return model, label
    path = Path(os.fspath(source))
    label = str(path)
    if not path.is_file():
        raise PrepareError(f"{label}: model file does not exist")
    try:
        # External data files named by the model, relative to its folder, checked (inside
        # it, their sizes, under 2 GiB in all) before they are read.
        model = onnx.load(str(path), load_external_data=False)
        _load_external(model, path.parent, label)
        return model, label
    except PrepareError:
        raise
    except FileNotFoundError as e:
        raise PrepareError(f"{label}: an external data file is missing: {e}") from e
    except Exception as e:
        raise PrepareError(
            f"{label}: not a valid ONNX protobuf (truncated or corrupt?): {_first_lines(e, 3)}"
        ) from e


def default_opset(model: onnx.ModelProto) -> int | None:
    """The version of the default (``ai.onnx``) opset the model imports, if any."""
    versions = [o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS]
    return max(versions) if versions else None


def _check(model: onnx.ModelProto, label: str, path: Path | None) -> None:
    if not model.HasField("graph"):
        raise PrepareError(f"{label}: the model has no graph (truncated or not an ONNX model?)")
    try:
        if model.ByteSize() > _PROTOBUF_LIMIT and path is not None:
            onnx.checker.check_model(str(path))
        elif model.ByteSize() <= _PROTOBUF_LIMIT:
            onnx.checker.check_model(model)
    except Exception as e:  # onnx.checker.ValidationError and friends
        raise PrepareError(f"{label}: onnx.checker rejects the model: {_first_lines(e, 4)}") from e


def prepare_model(
    source: Path | str | bytes | onnx.ModelProto,
    *,
    min_opset: int = MIN_IREE_OPSET,
    check: bool = True,
    base_dir: Path | None = None,
) -> PreparedModel:
    """Load, check and, below ``min_opset``, upgrade a model.

    Raises ``PrepareError`` for unreadable or malformed models (truncated protobuf,
    no graph, nodes whose domain has no opset import, inputs that nothing defines such
    as a missing initializer) and for failed opset upgrades.
    """
    model, label = load_model(source, base_dir)
    path = (
        None
        if isinstance(source, (bytes, bytearray, memoryview, onnx.ModelProto))
        else Path(os.fspath(source))
    )
    if check:
        _check(model, label, path)
    opset = default_opset(model)
    if opset is None:
        uses_default = any(n.domain in DEFAULT_DOMAINS for n in model.graph.node)
        if uses_default:
            domains = sorted(o.domain for o in model.opset_import)
            raise PrepareError(
                f"{label}: nodes use the default ONNX domain but opset_import names only "
                f"{domains}; add an opset_import for domain '' (ai.onnx)"
            )
        return PreparedModel(model, None, None, False, label)
    if opset >= min_opset:
        return PreparedModel(model, opset, opset, False, label)
    try:
        upgraded = onnx.version_converter.convert_version(model, min_opset)
    except Exception as e:
        raise PrepareError(
            f"{label}: upgrading the default-domain opset from {opset} to {min_opset} with "
            f"onnx.version_converter failed: {_first_lines(e, 4)}"
        ) from e
    return PreparedModel(upgraded, opset, default_opset(upgraded), True, label)


def _infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Shape inference with data propagation, as ``iree-import-onnx`` does by default.

    Failures are not fatal: the importer still works on models without full shapes
    (and its own error is the clearer one), so the original model is returned.
    """
    if model.ByteSize() > _PROTOBUF_LIMIT:
        return model
    try:
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:
        return model


def import_to_mlir(model: onnx.ModelProto, *, verify: bool = True) -> str:
    """Import ``model`` with IREE's ONNX importer and return the module's MLIR text."""
    try:
        from iree.compiler.extras import onnx_importer
        from iree.compiler.ir import Context
    except ImportError as e:
        raise OnnxImportError(
            f"IREE's ONNX importer is not available ({e}); install iree-base-compiler"
        ) from e
    inferred = _infer_shapes(model)
    context = Context()
    try:
        info = onnx_importer.ModelInfo(inferred)
        module = info.create_module(context=context).operation
        importer = onnx_importer.NodeImporter.define_function(info.main_graph, module)
        importer.import_all()
        if verify:
            module.verify()
        return module.get_asm(assume_verified=verify)
    except Exception as e:
        name = model.graph.name or "<unnamed>"
        raise OnnxImportError(
            f"importing ONNX graph {name!r} failed ({type(e).__name__}): {_first_lines(e)}"
        ) from e
