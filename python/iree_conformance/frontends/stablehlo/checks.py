"""Makes check ops check wherever they run.

``iree-run-module`` ignores check ops (the ``check`` module is an optional import), so a
check that nothing evaluates proves nothing. Every check op of a module, in any block,
loop body or called function (openxla/stablehlo's ``stablehlo.custom_call
@check.expect_*`` and IREE's ``check.expect_*`` dialect ops), becomes a call to an
import ``@conformance_check.expect_<site>`` that takes the checked value and, where there
is one, the expected value. At run time ``check_module.CheckRecorder`` implements those
imports in Python and records every call; numpy then compares each record with the rules
of its site (kind, tolerances, location), stored beside the compiled module.

One import per site, not one per kind, because IREE's stream scheduling may reorder
checks relative to each other: the site must travel with the call itself.

Functions and check ops are found by parsing the module with the compiler's MLIR
bindings, so commented-out code is never a test.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

CHECK_MODULE = "conformance_check"

# Check kinds and how the parent compares a record.
EXACT, CLOSE, TRUE, FALSE, ALL_TRUE = "exact", "close", "true", "false", "all_true"
_CUSTOM_CALL_KINDS = {
    "check.expect_eq": EXACT,
    "check.expect_close": CLOSE,
    "check.expect_almost_eq": CLOSE,
}
_DIALECT_KINDS = {
    "check.expect_eq": EXACT,
    "check.expect_eq_const": EXACT,
    "check.expect_almost_eq": CLOSE,
    "check.expect_almost_eq_const": CLOSE,
    "check.expect_true": TRUE,
    "check.expect_false": FALSE,
    "check.expect_all_true": ALL_TRUE,
}
# StableHLO's check.expect_close allows 0..3 ULPs by default (max_ulp_difference);
# expect_almost_eq, and IREE's check.expect_almost_eq*, bound |actual - expected| by
# atol + rtol * |expected|, atol 1e-4 and rtol 0 by default.
DEFAULT_MAX_ULP = 3
DEFAULT_ALMOST_EQ_ATOL = 1e-4
_LOC = re.compile(r'loc\("[^"]*":(\d+):(\d+)\)')
_CHECK_MARKER = re.compile(r"check\.expect_")


class CheckRewriteError(ValueError):
    pass


@dataclasses.dataclass
class CheckSite:
    """One check op in the source: how its records are compared and where it stands."""

    site: int
    kind: str
    function: str
    line: int | None = None
    column: int | None = None
    op: str = ""
    atol: float | None = None
    rtol: float | None = None
    max_ulp: int | None = None
    cconv: str = "0r_v"  # the import's VM calling convention: actual, and expected where given

    @property
    def location(self) -> str:
        where = f"{self.line}:{self.column}" if self.line is not None else "?"
        return f"{self.op} at line {where} in @{self.function}"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@functools.lru_cache(maxsize=1)
def _ir():
    """``iree.compiler.ir``, imported once (an import statement per attribute costs
    seconds over a corpus)."""
    from iree.compiler import ir

    return ir


@functools.lru_cache(maxsize=1)
def _context():
    """A context with every dialect IREE knows, parsing on this thread only: a thread
    pool per small module costs more than it saves, and more still on a loaded machine."""
    from iree.compiler.api import Session

    session = Session()
    session.context.enable_multithreading(False)
    _SESSIONS.append(session)  # the context lives as long as its session
    return session.context


_SESSIONS: list = []


def parse_module(text: str, context=None, filename: str = "-"):
    """The module parsed by IREE's MLIR bindings; CheckRewriteError with the parser's
    message, locations in it naming filename."""
    from iree.compiler import ir

    try:
        return ir.Module.parse(text, context or _context())
    except ir.MLIRError as e:
        raise CheckRewriteError(str(e).replace('"-":', f"{filename}:")) from None


def _walk(op):
    """Every operation nested in op, in pre-order."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                yield child
                yield from _walk(child)


def _str_attr(op, name: str) -> str | None:
    ir = _ir()
    if name not in op.attributes:
        return None
    attr = op.attributes[name]
    if isinstance(attr, ir.FlatSymbolRefAttr):
        return ir.FlatSymbolRefAttr(attr).value
    return ir.StringAttr(attr).value


def _check_kind(op) -> str | None:
    if op.name == "stablehlo.custom_call":
        return _CUSTOM_CALL_KINDS.get(_str_attr(op, "call_target_name") or "")
    return _DIALECT_KINDS.get(op.name)


def _functions(module) -> dict[str, Any]:
    functions: dict[str, Any] = {}
    for op in module.body.operations:
        if op.operation.name == "func.func":
            name = _str_attr(op.operation, "sym_name")
            assert name is not None, "func.func without sym_name (the verifier requires one)"
            functions[name] = op.operation
    return functions


def _is_public_noarg(func) -> bool:
    ir = _ir()
    attrs = func.attributes
    visibility = (
        ir.StringAttr(attrs["sym_visibility"]).value if "sym_visibility" in attrs else "public"
    )
    ftype = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
    return visibility == "public" and len(ftype.inputs) == 0 and len(func.regions[0].blocks) > 0


def test_functions_of(module) -> list[str]:
    """Public argument-less functions that hold check ops, directly or in functions they call."""
    functions = _functions(module)
    direct: dict[str, bool] = {}
    callees: dict[str, set[str]] = {}
    for name, func in functions.items():
        ops = list(_walk(func))
        direct[name] = any(_check_kind(op) for op in ops)
        callees[name] = {
            c
            for op in ops
            if op.name in ("func.call", "call")
            for c in [_str_attr(op, "callee")]
            if c
        }

    def reaches(name: str, seen: set[str]) -> bool:
        if direct.get(name):
            return True
        seen.add(name)
        return any(reaches(c, seen) for c in callees.get(name, ()) if c not in seen)

    return [
        name for name, func in functions.items() if _is_public_noarg(func) and reaches(name, set())
    ]


def list_test_functions(text: str) -> list[str]:
    """Test functions of a module's text; [] for text with no check op (parsed only if it has one)."""
    if not _CHECK_MARKER.search(text):
        return []
    return test_functions_of(parse_module(text))


def _float_attr(op, name: str) -> float | None:
    if name in op.attributes:
        try:
            return float(op.attributes[name].value)
        except (AttributeError, ValueError):
            return None
    return None


def _set_closeness(site: CheckSite, op, target: str | None) -> None:
    if op.name == "stablehlo.custom_call":
        if target == "check.expect_close":
            value = _float_attr(op, "max_ulp_difference")
            site.max_ulp = int(value) if value is not None else DEFAULT_MAX_ULP
            return
        tolerance = _float_attr(op, "tolerance")
        site.atol, site.rtol = (tolerance if tolerance is not None else DEFAULT_ALMOST_EQ_ATOL), 0.0
        return
    atol, rtol = _float_attr(op, "atol"), _float_attr(op, "rtol")
    site.atol = atol if atol is not None else DEFAULT_ALMOST_EQ_ATOL
    site.rtol = rtol if rtol is not None else 0.0


def _demoted(value, ir):
    """f64 (and complex<f64>) tensors converted to f32, as IREE demotes them by default
    (``--iree-input-demote-f64-to-f32``), which it refuses to do for an import's
    signature. Returned values were compared after the same demotion."""
    if not isinstance(value.type, ir.RankedTensorType):
        return value
    ttype = ir.RankedTensorType(value.type)
    element = ttype.element_type
    if isinstance(element, ir.F64Type):
        narrow = ir.F32Type.get()
    elif isinstance(element, ir.ComplexType) and isinstance(
        ir.ComplexType(element).element_type, ir.F64Type
    ):
        narrow = ir.ComplexType.get(ir.F32Type.get())
    else:
        return value
    converted = ir.Operation.create(
        "stablehlo.convert",
        results=[ir.RankedTensorType.get(ttype.shape, narrow)],
        operands=[value],
    )
    return converted.results[0]


def _cconv_char(type_, site: CheckSite) -> str:
    """How the VM passes one import argument: tensors as buffer view refs, scalars as such."""
    text = str(type_)
    if text.startswith("tensor<") or text.startswith("!hal."):
        return "r"
    chars = {
        "i32": "i",
        "i1": "i",
        "i8": "i",
        "i16": "i",
        "i64": "I",
        "f32": "f",
        "f64": "d",
        "index": "I",
    }
    if text not in chars:
        raise CheckRewriteError(f"{site.location}: cannot check a value of type {text}")
    return chars[text]


def instrument_checks(text: str, context=None, filename: str = "-") -> tuple[str, dict[str, Any]]:
    """Returns the module text with every check op turned into an import call, and the
    metadata the run needs: ``{"sites": [CheckSite...], "tests": [function names]}``."""
    from iree.compiler import ir

    module = parse_module(text, context, filename)
    tests = test_functions_of(module)
    if not tests:
        raise CheckRewriteError("no public argument-less function holds or calls a check op")
    ctx = module.context
    sites: list[CheckSite] = []
    declarations: list[tuple[str, list]] = []
    for name, func in _functions(module).items():
        for op in [op for op in _walk(func) if _check_kind(op)]:
            kind = _check_kind(op)
            assert kind is not None
            match = _LOC.search(str(op.location))
            target = (
                _str_attr(op, "call_target_name") if op.name == "stablehlo.custom_call" else None
            )
            site = CheckSite(
                site=len(sites),
                kind=kind,
                function=name,
                line=int(match.group(1)) if match else None,
                column=int(match.group(2)) if match else None,
                op=target or op.name,
            )
            with ir.InsertionPoint(op), op.location:
                operands = list(op.operands)
                args = [operands[0]]
                if op.name.endswith("_const"):
                    const = ir.Operation.create(
                        "arith.constant",
                        results=[operands[0].type],
                        attributes={"value": op.attributes["value"]},
                    )
                    args.append(const.results[0])
                elif kind in (EXACT, CLOSE):
                    if len(operands) < 2:
                        raise CheckRewriteError(
                            f"{site.location}: {site.op} needs an actual and an expected value"
                        )
                    args.append(operands[1])
                if kind == CLOSE:
                    _set_closeness(site, op, target)
                args = [_demoted(a, ir) for a in args]
                callee = f"{CHECK_MODULE}.expect_{site.site}"
                ir.Operation.create(
                    "func.call",
                    operands=args,
                    attributes={"callee": ir.FlatSymbolRefAttr.get(callee, context=ctx)},
                )
            site.cconv = "0" + "".join(_cconv_char(a.type, site) for a in args) + "_v"
            declarations.append((callee, [a.type for a in args]))
            sites.append(site)
            op.erase()
    with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown(ctx):
        for callee, types in declarations:
            ir.Operation.create(
                "func.func",
                attributes={
                    "sym_name": ir.StringAttr.get(callee, ctx),
                    "sym_visibility": ir.StringAttr.get("private", ctx),
                    "function_type": ir.TypeAttr.get(ir.FunctionType.get(types, [], context=ctx)),
                },
                regions=1,
            )
    return str(module), {"sites": [s.to_json() for s in sites], "tests": tests}
