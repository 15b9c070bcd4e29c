"""Results printed as ``iree-run-module`` prints them, and FileCheck over that text.

The format follows IREE's buffer view printer (``iree_hal_buffer_view_format``): the
shape and element type, ``=``, then the elements, ``%G`` for floats, ``%02X`` for i1,
rows of rank >= 2 in brackets: ``2x3xi32=[1 2 3][4 5 6]``. The tests compare it with
``iree-run-module``'s own output.
"""

from __future__ import annotations

import io
import os
import re
import tempfile

import numpy as np

from iree_conformance.frontends.mlir_types import mlir_element_type

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _element(value, dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return f"{int(value):02X}"
    if dtype.kind == "f":
        return f"{float(value):G}"
    return str(int(value))


def _elements(array: np.ndarray) -> str:
    if array.ndim <= 1:
        return " ".join(_element(v, array.dtype) for v in np.atleast_1d(array))
    return "".join(f"[{_elements(sub)}]" for sub in array)


def format_buffer_view(array: np.ndarray) -> str:
    array = np.asarray(array)
    type_name = mlir_element_type(array.dtype) or array.dtype.name
    shape = "".join(f"{d}x" for d in array.shape)
    return f"{shape}{type_name}={_elements(array)}"


def format_results(function: str, outputs: list[np.ndarray]) -> str:
    """What ``iree-run-module --function=<function>`` prints for these results."""
    lines = [f"EXEC @{function}"]
    for index, value in enumerate(outputs):
        value = np.asarray(value)
        lines.append(f"result[{index}]: hal.buffer_view")
        lines.append(format_buffer_view(value))
    return "\n".join(lines) + "\n"


def filecheck(check_file: str, output: str, args: list[str]) -> tuple[bool, str]:
    """Runs the ``filecheck`` package (LLVM FileCheck's Python clone) in process.

    Returns whether the output matched and FileCheck's diagnostic (the CHECK line that
    failed and where in the output it looked)."""
    from filecheck.matcher import Matcher
    from filecheck.options import parse_argv_options

    fd, path = tempfile.mkstemp(prefix="iree-conformance-output-", suffix=".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(output)
        opts = parse_argv_options(["filecheck", check_file, *args, "--input-file", path])
        matcher = Matcher.from_opts(opts)
        matcher.stderr = io.StringIO()
        code = matcher.run()
        return code == 0, _ANSI.sub("", matcher.stderr.getvalue()).replace(path, "<output>")
    finally:
        os.unlink(path)
