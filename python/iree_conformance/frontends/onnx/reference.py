"""The ``reference`` stage for ONNX models without shipped outputs: onnxruntime on CPU.

Graph optimizations are disabled (``ORT_DISABLE_ALL``): fusions and constant folding
change rounding, and the reference should compute the graph as written, node by node,
the way the ONNX specification defines it. Disabled optimizations cost speed, which
does not matter for one inference per case.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import onnx

__all__ = ["OnnxRuntimeReferenceError", "ort_path", "run_onnxruntime"]


class OnnxRuntimeReferenceError(Exception):
    """onnxruntime could not load or run the model, or gave a non-tensor output."""


@contextlib.contextmanager
def ort_path(path: str) -> Iterator[str]:
    """A path onnxruntime accepts for the model file ``path``: itself, or, when its name
    is not UTF-8 (onnxruntime takes only UTF-8 paths), a link ``model.onnx`` to it in a
    temporary folder, beside links to the first part of each external data location (a
    model's external data lies in its folder: prepare.external_data_bytes), for as long
    as the session is made."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        yield path
        return
    from onnx.external_data_helper import uses_external_data

    from iree_conformance.frontends.onnx.prepare import graph_tensors

    real = Path(path).resolve()
    header = onnx.load(real, load_external_data=False)
    with tempfile.TemporaryDirectory(prefix="iree-conformance-ort-") as tmp:
        (Path(tmp) / "model.onnx").symlink_to(real)
        for t in graph_tensors(header.graph):
            if uses_external_data(t):
                location = {e.key: e.value for e in t.external_data}.get("location", "")
                first = Path(location).parts[0] if location else ""
                link = Path(tmp) / first
                if first and first != "model.onnx" and not link.is_symlink():
                    link.symlink_to(real.parent / first)
        yield str(Path(tmp) / "model.onnx")


def _session_source(model: Path | str | bytes | onnx.ModelProto) -> tuple[str | bytes, str]:
    if isinstance(model, onnx.ModelProto):
        return model.SerializeToString(), f"model {model.graph.name or '<unnamed>'}"
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), f"<{len(model)} bytes of model>"
    path = os.fspath(model)
    return path, path


def run_onnxruntime(
    model: Path | str | bytes | onnx.ModelProto,
    inputs: Sequence[np.ndarray],
    *,
    intra_op_threads: int = 0,
) -> list[np.ndarray]:
    """Run ``model`` once on onnxruntime's CPU provider; ``inputs`` in graph-input order.

    ``intra_op_threads`` = 0 lets onnxruntime choose; pytest-xdist workers may pass 1.
    """
    try:
        import onnxruntime as ort
    except ImportError as e:
        raise OnnxRuntimeReferenceError(
            f"onnxruntime is not installed ({e}); install onnxruntime"
        ) from e
    source, label = _session_source(model)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = intra_op_threads
    # Fatal only: no "removing unused initializer" noise, and no kernel errors on stderr
    # (the exception carries them; a failed trial of input shapes is expected).
    options.log_severity_level = 4
    try:
        with contextlib.ExitStack() as stack:
            if isinstance(source, str):
                source = stack.enter_context(ort_path(source))
            session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    except Exception as e:
        raise OnnxRuntimeReferenceError(f"{label}: onnxruntime cannot load the model: {e}") from e
    # get_inputs() lists the inputs to feed, in graph order, without initializers
    # (old IR models list initializers as inputs; onnxruntime keeps those apart).
    names = [i.name for i in session.get_inputs()]
    if len(names) != len(inputs):
        raise OnnxRuntimeReferenceError(
            f"{label}: the model has {len(names)} inputs {names} but {len(inputs)} values "
            f"were given"
        )
    feeds = {name: np.asarray(value) for name, value in zip(names, inputs, strict=True)}
    run_options = ort.RunOptions()
    run_options.log_severity_level = 4
    try:
        outputs = session.run(None, feeds, run_options)
    except Exception as e:
        raise OnnxRuntimeReferenceError(f"{label}: onnxruntime failed to run it: {e}") from e
    result = []
    for meta, value in zip(session.get_outputs(), outputs, strict=True):
        if not isinstance(value, np.ndarray):
            raise OnnxRuntimeReferenceError(
                f"{label}: output '{meta.name}' is a {type(value).__name__} "
                f"({meta.type}), not a tensor"
            )
        result.append(value)
    return result
