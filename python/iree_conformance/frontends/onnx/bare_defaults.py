"""IREE's tools at their bare defaults on a model the harness upgraded: an IREE bug to report.

IREE's documented ONNX flow (its ONNX guide, iree-test-suites) imports with
``iree-import-onnx --opset-version 17``, and so does the harness (``prepare``). A user
who runs ``iree-import-onnx`` without the flag on an older export can meet a failure the
documented flow does not (a legacy opset-14 export: ``onnx.GreaterOrEqual`` below opset 16
is not legalized). For a user's model that was upgraded and imported, ``check`` imports
the model as given (no upgrade) and runs ``iree-compile --compile-to=input`` (the
conversion of the ONNX ops, no code generation): cheap, and stored with the import's
metadata, so a warm case does not run it again. The result is information beside the
verdict (``info["bare_defaults"]``), never the verdict.
"""

from __future__ import annotations

import re
from typing import Any

import onnx

from iree_conformance.frontends.onnx.prepare import OnnxImportError, default_opset, import_to_mlir
from iree_conformance.model.jobs import BARE_CHECK_OPTION

__all__ = ["BARE_CHECK_OPTION", "check", "first_error_line"]

_LOCATION = re.compile(r"^\S+:\d+:\d+:\s*")
_MAX_CHARS = 300


def first_error_line(text: str) -> str:
    """The first ``error:`` line of a tool's output (its location dropped), else the first
    line; at most 300 characters."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = next((ln for ln in lines if "error:" in ln), lines[0] if lines else "(no message)")
    line = _LOCATION.sub("", line)
    return line if len(line) <= _MAX_CHARS else line[:_MAX_CHARS] + " ..."


def check(model: onnx.ModelProto) -> dict[str, Any]:
    """``{"opset", "passes": True}``, or ``{"opset", "fails_at", "first_line"}`` where IREE's
    importer or the input conversion of ``iree-compile`` rejects the model as given."""
    opset = default_opset(model)
    try:
        text = import_to_mlir(model)
    except OnnxImportError as e:
        return {"opset": opset, "fails_at": "import", "first_line": first_error_line(str(e))}
    from iree.compiler import tools

    try:
        tools.compile_str(text, target_backends=["llvm-cpu"], extra_args=["--compile-to=input"])
    except tools.CompilerToolError as e:
        return {"opset": opset, "fails_at": "compile", "first_line": first_error_line(str(e))}
    return {"opset": opset, "passes": True}
