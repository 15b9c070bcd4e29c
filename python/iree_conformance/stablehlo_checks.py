"""Turns self-checking StableHLO programs into programs that return what they check.

``iree-run-module`` ignores check ops, so a check that IREE never evaluates proves
nothing. Instead, every public function without arguments that holds check ops
(openxla/stablehlo's ``stablehlo.custom_call @check.expect_*`` or IREE's ``check.*``
dialect) is rewritten to return, for each check, the checked value and its expected
value; the suite then compares them in numpy. Runs inside the worker process, with the
compiler's MLIR context.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

# Public functions without arguments: the candidates for test functions.
_PUBLIC_NOARG_FUNC = re.compile(r"func\.func\s+(?:public\s+)?@([\w$.-]+)\s*\(\s*\)")
_PRIVATE_FUNC = re.compile(r"func\.func\s+(?:private|nested)\s+@")
_CHECK_MARKER = re.compile(r"@check\.expect_|\bcheck\.expect_")

# Check kinds and how the parent compares the pair.
EXACT, CLOSE, TRUE, FALSE, ALL_TRUE = "exact", "close", "true", "false", "all_true"
_CUSTOM_CALL_KINDS = {"check.expect_eq": EXACT, "check.expect_close": CLOSE, "check.expect_almost_eq": CLOSE}
_DIALECT_KINDS = {
    "check.expect_eq": EXACT,
    "check.expect_eq_const": EXACT,
    "check.expect_almost_eq": CLOSE,
    "check.expect_almost_eq_const": CLOSE,
    "check.expect_true": TRUE,
    "check.expect_false": FALSE,
    "check.expect_all_true": ALL_TRUE,
}


class CheckRewriteError(ValueError):
    pass


def list_test_functions(text: str) -> list[str]:
    """Names of public, argument-less functions in a file that contains check ops.

    A cheap textual scan used at collection time; the rewrite confirms it.
    """
    if not _CHECK_MARKER.search(text):
        return []
    names = []
    starts = [m.start() for m in re.finditer(r"func\.func\s", text)] + [len(text)]
    for begin, end in zip(starts, starts[1:]):
        body = text[begin:end]
        header = body.split("\n", 1)[0]
        if _PRIVATE_FUNC.search(header):
            continue
        m = _PUBLIC_NOARG_FUNC.match(header)
        if m and _CHECK_MARKER.search(body):
            names.append(m.group(1))
    return names


@dataclasses.dataclass
class CheckPair:
    kind: str
    actual: int  # index into the rewritten function's results
    expected: int | None  # None for true/false/all_true
    atol: float | None = None
    rtol: float | None = None
    max_ulp: int | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _float_attr(op, name: str) -> float | None:
    if name in op.attributes:
        try:
            return float(op.attributes[name].value)
        except (AttributeError, ValueError):
            return None
    return None


# StableHLO's check.expect_close allows 0..3 ULPs by default (max_ulp_difference);
# expect_almost_eq, and IREE's check.expect_almost_eq*, bound |actual - expected| by an
# absolute tolerance, 1e-4 by default.
DEFAULT_MAX_ULP = 3
DEFAULT_ALMOST_EQ_ATOL = 1e-4


def _set_closeness(pair: CheckPair, op, ir) -> None:
    if op.name == "stablehlo.custom_call":
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        if target == "check.expect_close":
            value = _float_attr(op, "max_ulp_difference")
            pair.max_ulp = int(value) if value is not None else DEFAULT_MAX_ULP
            return
        tolerance = _float_attr(op, "tolerance")
        pair.atol, pair.rtol = (tolerance if tolerance is not None else DEFAULT_ALMOST_EQ_ATOL), 0.0
        return
    atol, rtol = _float_attr(op, "atol"), _float_attr(op, "rtol")
    pair.atol = atol if atol is not None else DEFAULT_ALMOST_EQ_ATOL
    pair.rtol = rtol if rtol is not None else 0.0


def rewrite_checks(text: str, context) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """Returns the rewritten module text and, per test function, its check pairs."""
    from iree.compiler import ir

    try:
        module = ir.Module.parse(text, context)
    except ir.MLIRError as e:
        raise CheckRewriteError(str(e)) from None
    functions: dict[str, list[dict[str, Any]]] = {}
    for func in module.body.operations:
        if func.operation.name != "func.func":
            continue
        attrs = func.operation.attributes
        visibility = attrs["sym_visibility"].value if "sym_visibility" in attrs else "public"
        ftype = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
        if visibility != "public" or len(ftype.inputs) != 0:
            continue
        name = ir.StringAttr(attrs["sym_name"]).value
        pairs = _rewrite_function(func.operation, ftype, ir)
        if pairs is not None:
            functions[name] = [p.to_json() for p in pairs]
    if not functions:
        raise CheckRewriteError("no public argument-less function with check ops found")
    return str(module), functions


def _rewrite_function(func, ftype, ir) -> list[CheckPair] | None:
    block = func.regions[0].blocks[0]
    checks = []
    ret = None
    for op in block.operations:
        op = op.operation
        if op.name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if target in _CUSTOM_CALL_KINDS:
                checks.append((op, _CUSTOM_CALL_KINDS[target]))
        elif op.name in _DIALECT_KINDS:
            checks.append((op, _DIALECT_KINDS[op.name]))
        elif op.name in ("func.return", "return"):
            ret = op
    if not checks:
        return None
    if ret is None:
        raise CheckRewriteError("test function has no func.return at its top level")
    values: list = []
    pairs: list[CheckPair] = []
    for op, kind in checks:
        with ir.InsertionPoint(op), op.location:
            operands = list(op.operands)
            actual = operands[0]
            expected = None
            if op.name.endswith("_const"):
                value_attr = op.attributes["value"]
                const = ir.Operation.create("arith.constant", results=[actual.type], attributes={"value": value_attr})
                expected = const.results[0]
            elif kind in (EXACT, CLOSE):
                expected = operands[1]
        pair = CheckPair(kind=kind, actual=len(values), expected=None)
        values.append(actual)
        if expected is not None:
            pair.expected = len(values)
            values.append(expected)
        if kind == CLOSE:
            _set_closeness(pair, op, ir)
        pairs.append(pair)
    for op, _ in checks:
        op.erase()
    with ir.InsertionPoint(ret), ret.location:
        ir.Operation.create("func.return", operands=values)
    ret.erase()
    ctx = func.context
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([], [v.type for v in values], context=ctx), context=ctx
    )
    if "res_attrs" in func.attributes:
        del func.attributes["res_attrs"]
    return pairs
