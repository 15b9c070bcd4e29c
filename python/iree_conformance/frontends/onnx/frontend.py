"""The ONNX frontend: a model is checked, upgraded to the opset the importer reads, fixed at
its case's chosen shapes, and imported to MLIR in process (``prepare``). A model over
protobuf's 2 GiB with its external data is checked by path and imported by IREE's
``iree-import-onnx --large-model --externalize-params`` (``large_import``): its weights
are a parameter file the worker keeps beside the module."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from iree_conformance.frontends.base import FrontendError, ImportContext, TimingReference
from iree_conformance.model.jobs import Program


@functools.lru_cache(maxsize=1)
def _onnx_version() -> str:
    """The onnx package's version (its checker and version converter shape the import),
    read without importing onnx, which a warm case never needs."""
    import importlib.metadata

    try:
        return importlib.metadata.version("onnx")
    except importlib.metadata.PackageNotFoundError:
        return ""


#: onnxruntime as a user runs it: recorded with its figures.
ORT_SETTINGS = {
    "providers": ["CPUExecutionProvider"],
    "graph_optimization_level": "ORT_ENABLE_ALL (default)",
    "intra_op_num_threads": "0 (default: one per core)",
}


class OnnxFrontend:
    name = "onnx"
    timing_modules = ("onnxruntime",)  # imported by timing_reference (registry.timing_modules)
    kind = "onnx"

    def importer_version(self) -> str:
        return _onnx_version()

    def source_files(self, program: Program, source: bytes) -> list[Path]:
        """The external data files the model names (read at import, so part of the import
        key); none for a model whose bytes name no location (no ``onnx`` import then)."""
        if not program.source_path or b"location" not in source:
            return []
        from iree_conformance.frontends.onnx.large_import import (
            external_data_locations,
            usable_memory_bytes,
        )
        from iree_conformance.frontends.onnx.prepare import inside_folder, load_model

        try:
            model = load_model(source)[0]
        except Exception:  # noqa: BLE001 - a model that does not parse fails at prepare
            return []
        base = Path(program.source_path).parent.resolve()
        files = []
        for location in external_data_locations(model):
            # Only what the import would read: a location outside the folder, or not a
            # regular file (/dev/zero, a FIFO), is refused at prepare and never read here.
            path = inside_folder(base, location)
            if path is not None and path.is_file():
                files.append(path)
        usable = usable_memory_bytes()
        if usable is not None and sum(f.stat().st_size for f in files) > usable:
            return []  # refused at prepare by the sizes alone ("nothing was read")
        return files

    def timing_reference(self, reference: str, inputs: list[Any]) -> TimingReference:
        """onnxruntime's session on the model file, fed the case's inputs."""
        import onnxruntime

        from iree_conformance.frontends.onnx.reference import ort_path

        with ort_path(reference) as path:  # a file name that is not UTF-8
            session = onnxruntime.InferenceSession(path, providers=ORT_SETTINGS["providers"])
        feed = {i.name: x for i, x in zip(session.get_inputs(), inputs)}
        return TimingReference(
            "onnxruntime",
            {"version": onnxruntime.__version__, "settings": ORT_SETTINGS},
            lambda: session.run(None, feed),
        )

    def prepare_and_import(
        self, program: Program, source: bytes, context: ImportContext
    ) -> tuple[bytes, dict[str, Any]]:
        from iree_conformance.frontends.onnx import bare_defaults, prepare
        from iree_conformance.frontends.onnx.static_shapes import (
            EVERY_DIM_OPTION,
            STATIC_OPTION,
            fix_every_named_dim,
            fix_input_shapes,
        )

        context.stage("prepare")
        # External data files are named relative to the model's folder.
        base = Path(program.source_path).parent if program.source_path else None
        if program.source_path:
            try:
                size = prepare.large_model_size(Path(program.source_path))
            except Exception as e:  # noqa: BLE001 - a model the checker rejects, bad data
                raise FrontendError("prepare", f"{type(e).__name__}: {e}") from None
            if size is not None:
                return _import_large(program, source, size, context)
        try:
            prepared = prepare.prepare_model(source, base_dir=base)
            static = program.import_options.get(STATIC_OPTION)
            every = program.import_options.get(EVERY_DIM_OPTION)
            if every:  # the other preparation: every named dim fixed (onnx.static_shapes)
                prepared.model = fix_every_named_dim(prepared.model, static or {}, every)
            elif static:  # the program at the case's chosen shapes (onnx.static_shapes)
                prepared.model = fix_input_shapes(prepared.model, static)
        except Exception as e:  # noqa: BLE001 - every prepare failure is reported
            raise FrontendError("prepare", f"{type(e).__name__}: {e}") from None
        meta: dict[str, Any] = {"opset_from": prepared.original_opset, "opset_to": prepared.opset}
        context.stage("import")
        try:
            text = prepare.import_to_mlir(prepared.model)
        except Exception as e:  # noqa: BLE001
            raise FrontendError("import", f"{e}\n{context.read_diagnostics()}") from None
        if prepared.upgraded and program.import_options.get(bare_defaults.BARE_CHECK_OPTION):
            meta["bare_defaults"] = _bare_check(source, base, static)
        return text.encode(), meta


def _bare_check(source: bytes, base: Path | None, static: Any) -> dict[str, Any]:
    """The model as given (no opset upgrade), at the same dims, through IREE's tools at
    their defaults (``bare_defaults``)."""
    from iree_conformance.frontends.onnx import bare_defaults, prepare
    from iree_conformance.frontends.onnx.static_shapes import fix_input_shapes

    try:
        model = prepare.prepare_model(source, base_dir=base, min_opset=0, check=False).model
        if static:
            model = fix_input_shapes(model, static)
        return bare_defaults.check(model)
    except Exception as e:  # noqa: BLE001 - information beside the verdict, never the verdict
        return {"error": f"the check itself failed: {type(e).__name__}: {e}"[:300]}


def _import_large(
    program: Program, source: bytes, size: int, context: ImportContext
) -> tuple[bytes, dict[str, Any]]:
    """A model over protobuf's 2 GiB: IREE's iree-import-onnx --large-model, the weights
    kept out of the MLIR in a parameter file (``large_import.py``); the metadata names the
    file for the worker to keep (``engine/worker/params.py``)."""
    from iree_conformance.frontends.onnx import large_import
    from iree_conformance.frontends.onnx.prepare import default_opset, load_model
    from iree_conformance.frontends.onnx.static_shapes import STATIC_OPTION

    assert program.source_path is not None
    usable = large_import.usable_memory_bytes()
    if usable is not None and size > usable:  # the importer holds the weights in memory
        raise FrontendError(
            "prepare",
            f"{program.source_path}: {size / 2**30:.2f} GiB of external data; importing it "
            f"(iree-import-onnx --large-model) holds the weights in memory, and a process "
            f"here may hold {usable / 2**30:.2f} GiB (the machine's memory, or its "
            "address-space limit): nothing was read; run it on a machine with more memory",
        )
    header = load_model(source)[0]  # the graph: its data stays in its files
    opset = default_opset(header)
    context.stage("import")
    try:
        done = large_import.import_large_model(
            Path(program.source_path),
            context.work_dir,
            program.import_options.get(STATIC_OPTION),
        )
    except large_import.LargeImportError as e:
        raise FrontendError("import", str(e)) from None
    meta = {
        "opset_from": opset,
        "opset_to": opset,  # iree-import-onnx cannot upgrade a large model's opset
        "large_model": {
            "bytes": size,
            "import_peak_rss_bytes": done.peak_rss_bytes,
            "import_line": done.command,
        },
        "parameters_file": str(done.params),
    }
    return done.mlir, meta
