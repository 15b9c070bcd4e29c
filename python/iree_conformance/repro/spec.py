"""What a reproducer folder holds, as plain data, and the command lines made of it.

``ReproSpec`` is everything the folder needs (the program, the flags, the arrays, the
failure it should show); ``compile_flags_text``, ``run_flags_text``, ``repro_sh`` and
``repro_cmd`` write IREE's own commands for it. ``iree-compile`` reads its flags from a
response file (``iree-compile @compile.flags``: LLVM's command-line library has no
``--flagfile``); ``iree-run-module`` from ``--flagfile=run.flags``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

#: IREE's per-type absolute thresholds (iree/tooling/comparison.cc) by numpy dtype name.
_IREE_THRESHOLD_FLAGS = {
    "float16": "--expected_f16_threshold",
    "float32": "--expected_f32_threshold",
    "float64": "--expected_f64_threshold",
    "bfloat16": "--expected_bf16_threshold",
}
MODULE_FILE = "module.vmfb"
INPUT_MLIR = "input.mlir"
MODEL_ONNX = "model.onnx"
#: repro.sh's first command: into its own folder however it is started (``sh repro.sh``,
#: ``bash repro.sh``, ``./repro.sh``, ``sh /abs/path/repro.sh``, from any folder). With no
#: slash in ``$0`` the script was found in the working folder, which is its own.
SH_CD = 'case "$0" in */*) cd "${0%/*}/" || exit 2 ;; esac'
#: repro.cmd's: ``%~dp0`` is the script's own drive and folder however it is started.
CMD_CD = 'cd /d "%~dp0"'
PARAMS_FILE = "params.irpa"  # a large model's weights (the store's file, linked or copied)


@dataclasses.dataclass
class ReproSpec:
    """One failing case on one target, ready to be written as a folder."""

    case_id: str
    target: str
    kind: str  # the expectation kind of the failure: fail-compile, fail-numerics, ...
    stage: str
    first_line: str
    compile_flags: tuple[str, ...]
    device: str
    function: str
    mlir: bytes | None = None  # None: an import failure (the .onnx file instead)
    onnx: bytes | None = None  # the model, for an import failure
    import_line: list[str] | None = None  # the iree-import-onnx command, for an import failure
    inputs: list[np.ndarray] = dataclasses.field(default_factory=list)
    expected: list[np.ndarray] | None = None  # None: no expected outputs to compare
    tolerances: list[tuple[float, float] | None] = dataclasses.field(default_factory=list)
    diagnostics: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)  # what the folder cannot show
    context: dict[str, Any] = dataclasses.field(default_factory=dict)  # ISSUE.md's extras
    sources_dir: str | None = None  # --sources: the dump folder inside the reproducer
    # The parameter file the module's weights are in (an ONNX model over 2 GiB), as
    # iree-run-module names it: "SCOPE=params.irpa", the folder's own copy or link of
    # ``parameters_file`` (the store's).
    parameters: str | None = None
    parameters_file: str | None = None

    @property
    def compares(self) -> bool:
        return self.expected is not None and self.kind == "fail-numerics"


def threshold_flags(
    expected: list[np.ndarray], tolerances: list[tuple[float, float] | None]
) -> list[str]:
    """IREE's tolerance flags from the case's (rtol, atol) per output: one absolute
    threshold per float type and the one relative tolerance IREE shares across types (the
    smallest of the outputs': the strictest)."""
    atol: dict[str, float] = {}
    rtols: list[float] = []
    for array, tol in zip(expected, tolerances):
        name = np.asarray(array).dtype.name
        if tol is None or name not in _IREE_THRESHOLD_FLAGS:
            continue
        rtol, abs_tol = tol
        atol[name] = min(abs_tol, atol.get(name, abs_tol))
        rtols.append(rtol)
    flags = [f"{_IREE_THRESHOLD_FLAGS[name]}={value:g}" for name, value in sorted(atol.items())]
    if rtols:
        flags.append(f"--expected_rtol={min(rtols):g}")
    return flags


#: Integer, bf16 and float8 outputs up to this many elements are written inline (``2x3xi32=1
#: 2 3 4 5 6``): IREE reads a .npy of int32 as ``si32`` and one of uint8 as ``ui8``, which
#: never match a module's signless ``i32`` or ``i8`` (unsigned outputs are written as the
#: signed view of their bytes), and a .npy has no bf16 or float8 (ml_dtypes' types read as
#: opaque).
INLINE_INT_LIMIT = 4096

#: IREE's element type names (iree/hal/string_util.c) of the float types a .npy cannot
#: say, by numpy (ml_dtypes) dtype name; IREE parses their values inline as floats.
INLINE_FLOAT_TYPES = {
    "bfloat16": "bf16",
    "float8_e4m3fn": "f8E4M3FN",
    "float8_e4m3fnuz": "f8E4M3FNUZ",
    "float8_e5m2": "f8E5M2",
    "float8_e5m2fnuz": "f8E5M2FNUZ",
}


#: What IREE's tools do with a float8 output's mismatch (measured with iree-run-module 3.13).
FLOAT8_MISMATCH_NOTE = (
    "iree-run-module compares float8 outputs (equal values print [SUCCESS]) but aborts with "
    "OUT_OF_RANGE when it reports a mismatch of an f8E4M3FN, f8E4M3FNUZ or f8E5M2FNUZ output "
    "(an f8E5M2 one is reported), so the reproducer may not show IREE's own mismatch report; remove the --expected_output line of run.flags to print the actual values "
    "and compare them with the expected ones written there."
)


def has_float8(arrays: list[np.ndarray] | None) -> bool:
    """Whether an output is a float8 type (whose mismatch IREE's tools cannot report)."""
    return any(np.asarray(a).dtype.name.startswith("float8") for a in arrays or [])


def _float_text(value: float) -> str:
    """A float as IREE's parser reads it (``nan``, ``inf``, ``-inf`` included)."""
    return repr(value)


def expected_value(array: np.ndarray, index: int) -> str:
    """``@expected_K.npy``, or an integer, bf16 or float8 output inline as IREE writes one."""
    a = np.asarray(array)
    if a.size > INLINE_INT_LIMIT:
        return f"@expected_{index}.npy"
    if a.dtype.kind in "iu":  # the module returns unsigned outputs signless: their bytes
        signed = a.view(f"i{a.dtype.itemsize}")
        kind, values = f"i{a.dtype.itemsize * 8}", [str(int(v)) for v in signed.reshape(-1)]
    elif a.dtype.name in INLINE_FLOAT_TYPES:
        kind = INLINE_FLOAT_TYPES[a.dtype.name]
        values = [_float_text(float(v)) for v in a.reshape(-1)]
    else:
        return f"@expected_{index}.npy"
    shape = "x".join(str(d) for d in a.shape)
    return f"{shape}x{kind}={' '.join(values)}" if shape else f"{kind}={' '.join(values)}"


def compile_flags_text(spec: ReproSpec) -> str:
    flags = list(spec.compile_flags)
    if spec.sources_dir:
        flags += [
            f"--iree-hal-dump-executable-sources-to={spec.sources_dir}/sources",
            f"--iree-hal-dump-executable-benchmarks-to={spec.sources_dir}/benchmarks",
            f"--dump-compilation-phases-to={spec.sources_dir}/phases",
        ]
    return "\n".join(flags) + "\n"


def run_flags_text(spec: ReproSpec) -> str:
    lines = [f"--parameters={spec.parameters}"] if spec.parameters else []
    lines += [f"--module={MODULE_FILE}", f"--device={spec.device}", f"--function={spec.function}"]
    lines += [f"--input=@input_{i}.npy" for i in range(len(spec.inputs))]
    if spec.compares and spec.expected is not None:
        lines += [f"--expected_output={expected_value(a, i)}" for i, a in enumerate(spec.expected)]
        lines += threshold_flags(spec.expected, spec.tolerances)
    else:
        lines += [f"--output=@actual_{i}.npy" for i in range(len(spec.expected or []))]
    return "\n".join(lines) + "\n"


def _quote_sh(word: str) -> str:
    safe = all(c.isalnum() or c in "-_=./@:" for c in word)
    return word if safe and word else "'" + word.replace("'", "'\\''") + "'"


def repro_sh(spec: ReproSpec) -> str:
    lines = ["#!/bin/sh", f"# {_comment(spec)}", SH_CD]
    if spec.import_line:
        lines.append(" ".join(_quote_sh(w) for w in spec.import_line) + " || exit $?")
    lines.append(f"iree-compile @compile.flags {INPUT_MLIR} -o {MODULE_FILE} || exit $?")
    lines.append("iree-run-module --flagfile=run.flags")
    return "\n".join(lines) + "\n"


def repro_cmd(spec: ReproSpec) -> str:
    lines = ["@echo off", f"rem {_comment(spec)}", CMD_CD]
    if spec.import_line:
        lines.append(
            " ".join(f'"{w}"' if " " in w else w for w in spec.import_line) + " || exit /b 1"
        )
    lines.append(f"iree-compile @compile.flags {INPUT_MLIR} -o {MODULE_FILE} || exit /b 1")
    lines.append("iree-run-module --flagfile=run.flags")
    return "\r\n".join(lines) + "\r\n"


def _comment(spec: ReproSpec) -> str:
    text = f"{spec.case_id} on {spec.target}: {spec.kind} at {spec.stage}"
    return "".join(c if c.isprintable() else " " for c in text)
