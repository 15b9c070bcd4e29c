"""Numpy values as MLIR text, and the check function that makes an export self-checking.

Only numpy: the text is written where JAX runs, and read back anywhere.

IREE's ``util.unfoldable_constant`` and ``check.*`` ops take signless element types only,
and its check ops take no complex values. So an unsigned input is a ``stablehlo.constant``
(which takes any element type), an unsigned result is bitcast to the signless type of its
width before its check, and a complex result is checked as its real and imaginary parts.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from iree_conformance.frontends.mlir_types import ELEMENT_TYPES, mlir_element_type

CHECK_FUNCTION = "check_xla"


class UnsupportedValue(ValueError):
    """A value whose element type has no MLIR spelling here."""


@dataclasses.dataclass(frozen=True)
class CheckTolerance:
    """|actual - expected| <= atol + rtol * |expected|, for floating-point results."""

    rtol: float
    atol: float


def element_type(dtype: np.dtype) -> str:
    found = mlir_element_type(dtype)
    if found is None:
        supported = ", ".join(dict.fromkeys(ELEMENT_TYPES.values()))
        raise UnsupportedValue(
            f"element type {np.dtype(dtype).name} is not supported (supported: {supported})"
        )
    return found


def tensor_type(array: np.ndarray) -> str:
    dims = "".join(f"{d}x" for d in array.shape)
    return f"tensor<{dims}{element_type(array.dtype)}>"


def dense(array: np.ndarray) -> str:
    """A dense elements attribute holding exactly the array's values (hex bytes, so
    floats round-trip bit for bit; booleans as literals)."""
    array = np.ascontiguousarray(array)
    if array.size == 0:
        return "dense<>"
    if array.dtype == np.bool_:
        return "dense<" + _nested(array) + ">"
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return f'dense<"0x{data.hex().upper()}">'


def _nested(array: np.ndarray) -> str:
    if array.ndim == 0:
        return "true" if bool(array) else "false"
    return "[" + ", ".join(_nested(a) for a in array) + "]"


_FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


def _kind(dtype: np.dtype) -> str:
    """'f' float (ml_dtypes' bfloat16 included, whose numpy kind is 'V'), 'c' complex,
    'u' unsigned, 'i' signless integer or bool."""
    et = element_type(dtype)
    if et in _FLOAT_TYPES:
        return "f"
    if et.startswith("complex"):
        return "c"
    return "u" if et.startswith("ui") else "i"


def _signless(array: np.ndarray) -> np.ndarray:
    return array.view(np.dtype(f"int{array.dtype.itemsize * 8}"))


def _float(value: float) -> str:
    return f"{value:.6e}"


def check_function(inputs: list[np.ndarray], outputs: list[np.ndarray], tol: CheckTolerance) -> str:
    """``@check_xla``: calls ``@main`` on the inputs (as constants the compiler cannot fold)
    and checks each result against the expected output."""
    if not outputs:
        raise UnsupportedValue("the function returns nothing to check")
    lines = [f"  func.func @{CHECK_FUNCTION}() {{"]
    for i, value in enumerate(inputs):
        op = "stablehlo.constant" if _kind(value.dtype) == "u" else "util.unfoldable_constant"
        lines.append(f"    %arg{i} = {op} {dense(value)} : {tensor_type(value)}")
    arg_types = ", ".join(tensor_type(v) for v in inputs)
    result_types = ", ".join(tensor_type(v) for v in outputs)
    results = "%result" if len(outputs) == 1 else f"%result:{len(outputs)}"
    args = ", ".join(f"%arg{i}" for i in range(len(inputs)))
    lines.append(f"    {results} = func.call @main({args}) : ({arg_types}) -> ({result_types})")
    for j, expected in enumerate(outputs):
        result = "%result" if len(outputs) == 1 else f"%result#{j}"
        lines += _checks(result, f"r{j}", expected, tol)
    lines += ["    return", "  }"]
    return "\n".join(lines)


def _checks(value: str, name: str, expected: np.ndarray, tol: CheckTolerance) -> list[str]:
    kind = _kind(expected.dtype)
    type_ = tensor_type(expected)
    if kind == "c":
        lines = []
        for op, part in (("real", expected.real), ("imag", expected.imag)):
            part = np.ascontiguousarray(part)
            lines.append(
                f"    %{name}_{op} = stablehlo.{op} {value} : ({type_}) -> {tensor_type(part)}"
            )
            lines += _checks(f"%{name}_{op}", f"{name}_{op}", part, tol)
        return lines
    if kind == "f":
        return [
            f"    check.expect_almost_eq_const({value}, {dense(expected)} : {type_}, "
            f"atol {_float(tol.atol)}, rtol {_float(tol.rtol)}) : {type_}"
        ]
    if kind == "u":
        signless = _signless(expected)
        cast = f"%{name}_signless"
        return [
            f"    {cast} = stablehlo.bitcast_convert {value} : ({type_}) -> {tensor_type(signless)}",
            f"    check.expect_eq_const({cast}, {dense(signless)} : {tensor_type(signless)}) "
            f": {tensor_type(signless)}",
        ]
    return [f"    check.expect_eq_const({value}, {dense(expected)} : {type_}) : {type_}"]


_FINAL_BRACE = re.compile(r"\}\s*\Z")


def self_checking_module(exported: str, check: str, header: list[str]) -> str:
    """The exported module with the check function added at its end, and header comments."""
    if not _FINAL_BRACE.search(exported) or not exported.lstrip().startswith("module"):
        raise UnsupportedValue("the exported text is not one `module ... { ... }`")
    body = _FINAL_BRACE.sub("", exported).rstrip()
    comments = "".join(f"// {line}\n" for line in header)
    return f"{comments}{body}\n{check}\n}}\n"
