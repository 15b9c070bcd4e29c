"""The import of an ONNX model over protobuf's 2 GiB: IREE's own ``iree-import-onnx
--large-model --externalize-params``, in a child process, which writes the MLIR with the
weights as named parameters (scope ``model``) and the weights to an ``.irpa`` file.

Protobuf cannot hold such a model as one message, so the in-process importer cannot take
it. The tool reads the model by path and the external data from the model's folder; the
model file it reads is a copy of the graph (no data) in a scratch folder, so a read-only
model folder and the static input shapes of a case (``onnx.static_shapes``) both work.
The parameter file is an artifact like the module: the worker keeps it in the store
(``engine/worker/params.py``) and the runtime loads it beside the module.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iree_conformance.common.fsutil import make_temp_dir

__all__ = [
    "PARAMS_SCOPE",
    "LargeImport",
    "LargeImportError",
    "external_data_identity",
    "external_data_locations",
    "import_large_model",
    "import_line",
]

#: The scope of the parameters in the MLIR (``#stream.parameter.named<"model"::...>``):
#: iree-import-onnx's default, and what ``--parameters=model=FILE`` names.
PARAMS_SCOPE = "model"
PARAMS_FILE = "params.irpa"
_MLIR_FILE = "model.mlir"
_MAX_LINES = 8
# iree-import-onnx's main, its --data-dir given as the str that onnx's readers take: the
# tool passes the pathlib.Path it parsed, which onnx 1.17+ refuses ("incompatible
# function arguments" in _open_external_data).
_TOOL = (
    "import sys\n"
    "from iree.compiler.tools.import_onnx.__main__ import main, parse_arguments\n"
    "args = parse_arguments(sys.argv[1:])\n"
    "if args.data_dir is not None:\n"
    "    args.data_dir = str(args.data_dir)\n"
    "main(args)\n"
)


class LargeImportError(Exception):
    """iree-import-onnx failed on the model; the message holds its last lines."""


@dataclasses.dataclass(frozen=True)
class LargeImport:
    """What the tool wrote: the MLIR text, the parameter file, its peak RSS."""

    mlir: bytes
    params: Path
    peak_rss_bytes: int | None
    command: list[str]


def external_data_locations(model: Any) -> list[str]:
    """The external data files the model names, relative to its folder (sorted)."""
    from onnx.external_data_helper import uses_external_data

    from iree_conformance.frontends.onnx.prepare import graph_tensors

    locations = set()
    for t in graph_tensors(model.graph):
        if uses_external_data(t):
            locations.add({e.key: e.value for e in t.external_data}.get("location", ""))
    return sorted(locations)


def external_data_identity(model: Any, base_dir: Path) -> list[list[Any]]:
    """[location, size, mtime_ns] of each external data file the model names (sorted):
    which files a large model's import reads (the import key holds their bytes' digests:
    ``OnnxFrontend.source_files``)."""
    found = []
    for location in external_data_locations(model):
        st = (base_dir / location).stat()
        found.append([location, st.st_size, st.st_mtime_ns])
    return found


def import_line(model: str = "model.onnx") -> list[str]:
    """The iree-import-onnx command that makes the MLIR and the parameter file."""
    return [
        "iree-import-onnx",
        model,
        "--large-model",
        "--externalize-params",
        f"--params-scope={PARAMS_SCOPE}",
        "--save-params-to",
        PARAMS_FILE,
        "-o",
        "input.mlir",
    ]


def _graph_copy(path: Path, folder: Path, static: Mapping[str, Any] | None) -> Path:
    """The model's graph without its data, at the case's static shapes where it has them,
    written to ``folder`` (the tool's own temporary files go beside it)."""
    import onnx

    from iree_conformance.frontends.onnx.static_shapes import fix_input_shapes

    model = onnx.load(str(path), load_external_data=False)
    if static:
        model = fix_input_shapes(model, dict(static))
    copy = folder / "model.onnx"
    copy.write_bytes(model.SerializeToString())
    return copy


def _tail(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-_MAX_LINES:])


def import_large_model(
    path: Path,
    work_dir: Path | None = None,
    static: Mapping[str, Any] | None = None,
    timeout_s: float | None = None,
) -> LargeImport:
    """Runs ``iree-import-onnx --large-model --externalize-params`` on the model at
    ``path`` in a new folder under ``work_dir`` (default: the system's temporary folder);
    the caller owns the folder of ``LargeImport.params``."""
    path = Path(path).resolve()
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
        folder = make_temp_dir("onnx-large-", work_dir)
    else:
        folder = Path(tempfile.mkdtemp(prefix="onnx-large-"))
    try:
        return _run_tool(path, folder, static, timeout_s)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _children_peak_rss() -> int | None:
    """The largest finished child's peak RSS in bytes (None on Windows, which has no
    ``resource``): Linux counts ``ru_maxrss`` in KiB, macOS in bytes."""
    if sys.platform == "win32":
        return None
    import resource

    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def usable_memory_bytes() -> int | None:
    """What a process here may hold: the physical memory, under the address-space limit
    when one is set (None where neither can be read, as on Windows)."""
    if sys.platform == "win32":
        return None
    import resource

    try:
        found = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return min(found, soft) if soft != resource.RLIM_INFINITY else found


def _run_tool(
    path: Path, folder: Path, static: Mapping[str, Any] | None, timeout_s: float | None
) -> LargeImport:
    try:
        graph = _graph_copy(path, folder, static)
    except Exception as e:  # noqa: BLE001 - unreadable graph: the tool would say the same
        raise LargeImportError(f"{path}: cannot copy the graph: {type(e).__name__}: {e}") from e
    params, mlir = folder / PARAMS_FILE, folder / _MLIR_FILE
    command = [
        sys.executable,
        "-c",
        _TOOL,
        str(graph),
        "--large-model",
        "--externalize-params",
        f"--params-scope={PARAMS_SCOPE}",
        "--data-dir",
        str(path.parent),
        "--save-params-to",
        str(params),
        "-o",
        str(mlir),
    ]
    before = _children_peak_rss()
    try:
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    except subprocess.TimeoutExpired:
        raise LargeImportError(
            f"iree-import-onnx did not finish within {timeout_s:.0f} s"
        ) from None
    after = _children_peak_rss()
    # ru_maxrss of the children is the largest child's: this child's when it is the largest.
    peak = after if after is not None and before is not None and after > before else None
    if proc.returncode != 0 or not mlir.is_file() or not params.is_file():
        raise LargeImportError(
            f"iree-import-onnx --large-model --externalize-params failed (exit "
            f"{proc.returncode}):\n{_tail(proc.stderr or proc.stdout)}"
        )
    return LargeImport(mlir.read_bytes(), params, peak, import_line(path.name))
