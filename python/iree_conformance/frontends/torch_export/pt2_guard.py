"""What a ``.pt2`` may hold, checked before torch reads it (docs/torch.md).

``torch.export.load`` runs code from the file in three ways: it unpickles with
``weights_only=False`` (sample inputs when the safe load fails, weights and constants
marked ``use_pickle``, a legacy archive's state), it unpickles object constants and loads
an AOTInductor package's shared library, and it gives each symbolic shape's expression
(``expr_str``) to ``sympy.sympify``, which evaluates it as Python. So, before torch
opens the file, ``check`` refuses an archive that holds compiled code, a pickled object,
or a shape expression other than sympy's own printing of integers, symbols and
arithmetic; and ``weights_only`` makes every ``torch.load`` of the load use torch's
``weights_only`` loading (its ``TORCH_FORCE_WEIGHTS_ONLY_LOAD``), which builds tensors
and plain containers and calls nothing else.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from iree_conformance.model.results import parse_json

#: The largest JSON member read (a program's graph; bert's is about 2 MiB).
MAX_JSON_BYTES = 512 * 2**20
_FORCE = "TORCH_FORCE_WEIGHTS_ONLY_LOAD"
_NO_FORCE = "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"
#: The names sympy's ``srepr`` and torch's shape functions print (torch/_export/serde).
_CALLS = frozenset(
    "Symbol Integer Rational Float Add Mul Pow Max Min Abs Mod floor ceiling Eq Ne Lt Le "
    "Gt Ge Equality Unequality StrictLessThan LessThan StrictGreaterThan GreaterThan "
    "And Or Not Xor ITE Piecewise ExprCondPair sqrt "
    "FloorDiv ModularIndexing Where PythonMod CleanDiv CeilToInt FloorToInt CeilDiv "
    "LShift RShift PowByNatural FloatPow FloatTrueDiv IntTrueDiv "
    "IsNonOverlappingAndDenseIndicator TruncToFloat TruncToInt RoundToInt RoundDecimal "
    "ToFloat Identity IntInfinity NegativeIntInfinity".split()
)
_ATOMS = frozenset(
    "true false oo zoo nan int_oo Infinity NegativeInfinity NaN ComplexInfinity One "
    "Zero NegativeOne Half".split()
)
_TORCH_FN = re.compile(r"(OpaqueUnaryFn|BitwiseFn)_\w+$")
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_SAFE_NODES = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Load,
    ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
)  # fmt: skip


class UnsafeArchive(Exception):
    """The archive holds what loading it would run; the message says what."""


def check(path: Path) -> None:
    """Refuses (``UnsafeArchive``) an archive whose load would run code from it."""
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            name = info.filename
            parts = name.split("/")
            if "aotinductor" in parts:
                raise UnsafeArchive(
                    f"it holds compiled code ({name}, an AOTInductor package), whose "
                    "shared library loading would run"
                )
            if parts[-1].startswith(("custom_obj_", "opaque_obj_")):
                raise UnsafeArchive(
                    f"it holds a pickled object ({name}), which loading would unpickle"
                )
            if name.endswith(".json"):
                _check_json(archive, info)


def _check_json(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    if info.file_size > MAX_JSON_BYTES:
        raise UnsafeArchive(f"{info.filename} is larger than {MAX_JSON_BYTES // 2**20} MiB")
    data = parse_json(archive.read(info), info.filename, UnsafeArchive)
    stack: list[Any] = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            expr = value.get("expr_str")
            if expr is not None:
                _check_expression(expr, info.filename)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _check_expression(expr: Any, where: str) -> None:
    """Only what sympy prints for a shape: calls of its classes and torch's shape
    functions on symbols, numbers and each other; no attribute, subscript or other name
    (sympify evaluates the text as Python)."""
    if not isinstance(expr, str):
        raise UnsafeArchive(f"{where}: a shape expression that is not text")
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    bad = tree is None or not all(_allowed(node) for node in ast.walk(tree))
    if bad:
        shown = expr if len(expr) <= 80 else expr[:77] + "..."
        raise UnsafeArchive(
            f"{where}: the shape expression {shown!r} is not one torch writes "
            "(sympy evaluates it as Python when the file is loaded)"
        )


def _allowed(node: ast.AST) -> bool:
    if isinstance(node, _SAFE_NODES):
        return True
    if isinstance(node, ast.Name):
        return (
            node.id in _CALLS
            or node.id in _ATOMS
            or bool(_TORCH_FN.match(node.id))
            or bool(re.fullmatch(r"[a-z]+\d+", node.id))  # a symbol: s0, u3, zuf1
        )
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, str):
            return bool(_SYMBOL.match(value) or _NUMBER.match(value))
        return value is None or isinstance(value, (bool, int, float))
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and all(k.arg is not None for k in node.keywords)
    if isinstance(node, ast.keyword):
        return isinstance(node.value, ast.Constant) and isinstance(node.value.value, (bool, int))
    return False


@contextlib.contextmanager
def weights_only() -> Iterator[None]:
    """Every ``torch.load`` inside loads with ``weights_only=True``, even one that asks
    for ``False`` (torch's own ``TORCH_FORCE_WEIGHTS_ONLY_LOAD``)."""
    saved = {k: os.environ.get(k) for k in (_FORCE, _NO_FORCE)}
    os.environ[_FORCE] = "1"
    os.environ.pop(_NO_FORCE, None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
