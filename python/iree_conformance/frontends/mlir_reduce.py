"""The smallest failing MLIR program: delta debugging over the ops of a module's functions.

Any frontend's program is MLIR by the time IREE compiles it (StableHLO, an exported JAX
or torch program, an imported ONNX model), so a compile failure or a compiler crash is
cut down here, with the wheel's MLIR Python bindings (``iree.compiler.ir``; the wheels
ship no ``iree-reduce``). A candidate keeps a subset of the functions' ops, those inside
regions included (an op dropped takes its regions with it; terminators stay); constants
are no items: one stays while a kept op reads it (a shape, an axis stays a constant):

* a dropped op's results that a kept op (or a terminator) reads become new arguments
  of its function, of the same type (inside a region isolated from above that does not
  verify, and the candidate fails another way);
* the results of kept ops that nothing reads are returned too, so the compiler cannot
  drop them as dead before it fails; the function's type follows its block;
* private functions and globals that nothing references any more are dropped.

A candidate whose function is called elsewhere with the old signature does not verify,
so it fails another way and is not kept: ``ddmin`` moves on. The caller's predicate (the
engine's: compiled through the store, the same stage and normalized first line) judges
each candidate's text. ``MlirReduction`` says ops before and after (counted in every
function, nested ops included, terminators not), candidates checked and time.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable

from iree_conformance.frontends.ddmin import ddmin
from iree_conformance.frontends.mlir_cut import cut_to_failing_function

__all__ = ["MlirReduction", "MlirReductionError", "count_ops", "reduce_mlir"]


class MlirReductionError(Exception):
    """The program cannot be reduced (it does not parse, has no ops, or does not fail
    the same way once printed again)."""


@dataclasses.dataclass
class MlirReduction:
    """What the reduction found: the smallest failing text and how it got there."""

    ops_before: int
    ops_after: int
    text: str
    op_names: list[str]
    complete: bool  # False: the budget ran out first
    tested: int
    elapsed_s: float
    budget_s: float | None

    def summary(self) -> str:
        names = ", ".join(self.op_names)
        line = (
            f"reduced {self.ops_before} ops to {self.ops_after} ({names}) in "
            f"{self.elapsed_s:.1f} s, {self.tested} candidates checked"
        )
        if not self.complete:
            line += (
                f"; the budget of {self.budget_s:g} s ran out: this is the smallest failing "
                "program found so far, not a minimal one (raise --reduce-budget)"
            )
        return line


def _context():
    from iree.compiler import ir

    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True  # attributes such as #sdy.* stay opaque
    return ctx


def _functions(module) -> list:
    return [
        op.operation
        for op in module.body.operations
        if op.operation.name == "func.func" and len(op.operation.regions[0].blocks) > 0
    ]


def _counted(module) -> list[str]:
    """The names of the ops in the module's functions, nested ones too, no terminators."""
    return [op.name for f in _functions(module) for op in _ops(f)]


def count_ops(text: str) -> int:
    """The ops of a module's functions (nested ops included, terminators not)."""
    with _context() as ctx:
        return len(_counted(_parse(text, ctx)))


def _parse(text: str, ctx):
    from iree.compiler import ir

    try:
        return ir.Module.parse(text, ctx)
    except ir.MLIRError as e:
        first = str(e).splitlines()[0] if str(e) else "no message"
        raise MlirReductionError(f"the MLIR program does not parse: {first}") from None


class MlirReducer:
    """Cuts candidates out of one module: the items are (function, op) positions."""

    def __init__(self, text: str):
        self.text = text
        with _context() as ctx:
            module = _parse(text, ctx)
            self.items = [
                (fi, oi)
                for fi, f in enumerate(_functions(module))
                for oi, op in enumerate(_ops(f))
                if not _constant(op)
            ]
            self.ops_before = len(_counted(module))
        if not self.items:
            raise MlirReductionError("the program's functions hold no ops: nothing to reduce")

    def candidate(self, kept: tuple[int, ...]) -> tuple[str, list[str]]:
        """The module keeping these items (indices into ``items``): its text and its ops."""
        from iree.compiler import ir

        keep = {self.items[i] for i in kept}
        with _context() as ctx, ir.Location.unknown(ctx) as loc:
            module = _parse(self.text, ctx)
            for fi, f in enumerate(_functions(module)):
                _cut_function(f, fi, keep, loc)
            _drop_unused_private(module)
            return str(module), _counted(module)


def _cut_function(f, fi: int, keep: set[tuple[int, int]], loc) -> None:
    from iree.compiler import ir

    block = f.regions[0].blocks[0]
    ops = _ops(f)
    dropped = [op for oi, op in enumerate(ops) if (fi, oi) not in keep and not _constant(op)]
    if not dropped:
        return
    # Reversed pre-order: readers first, and an op inside a region before the op that
    # holds it (whose erasure then takes what is left inside).
    for op in reversed(dropped):
        for result in op.results:
            if _read(result):
                result.replace_all_uses_with(block.add_argument(result.type, loc))
        op.erase()
    for op in reversed(_ops(f)):  # a constant stays while an op reads it
        if _constant(op) and not any(_read(r) for r in op.results):
            op.erase()
    terminator = [op.operation for op in block.operations][-1]
    if terminator.name != "func.return":
        return
    # Returned: what the kept ops make (not a new argument passed straight through), and
    # the results of the function's own ops that nothing reads.
    unread = [r for op in _body(f) for r in op.results if not _read(r)]
    returned = [v for v in [*terminator.operands, *unread] if not isinstance(v.owner, ir.Block)]
    ir.Operation.create(
        "func.return", operands=returned, loc=terminator.location,
        ip=ir.InsertionPoint.at_block_terminator(block),
    )  # fmt: skip
    terminator.erase()
    for i in reversed(range(len(block.arguments))):
        if not _read(block.arguments[i]):
            block.erase_argument(i)
    inputs = [a.type for a in block.arguments]
    f.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(inputs, [v.type for v in returned])
    )
    for name in ("arg_attrs", "res_attrs"):  # one per argument or result: no longer
        if name in f.attributes:
            del f.attributes[name]


def _body(f) -> list:
    """A function's ops, its terminator left out."""
    return [op.operation for op in f.regions[0].blocks[0].operations][:-1]


def _ops(operation) -> list:
    """Every op in the regions of ``operation``, in pre-order, each block's terminator
    left out: the items of a function (an op inside a region is an item of its own)."""
    found = []
    for region in operation.regions:
        for block in region.blocks:
            for op in [op.operation for op in block.operations][:-1]:
                found.append(op)
                found += _ops(op)
    return found


def _constant(op) -> bool:
    """A constant (no operands, no regions): never an item, kept while an op reads it, so
    a shape or an attribute-like operand stays what it was rather than an argument."""
    return "constant" in op.name and not len(op.operands) and not len(op.regions)


def _read(value) -> bool:
    return any(True for _ in value.uses)


def _drop_unused_private(module) -> None:
    """Private symbols (functions, ``util.global``s) nothing references, until none is left."""
    while True:
        ops = [op.operation for op in module.body.operations]
        texts = {id(op): str(op) for op in ops}
        dropped = False
        for op in ops:
            attrs = op.attributes
            if "sym_name" not in attrs or "sym_visibility" not in attrs:
                continue
            if str(attrs["sym_visibility"]) != '"private"':
                continue
            name = str(attrs["sym_name"]).strip('"')
            pattern = re.compile(rf"@{re.escape(name)}(?![\w$.-])|@\"{re.escape(name)}\"")
            if not any(pattern.search(t) for k, t in texts.items() if k != id(op)):
                op.erase()
                dropped = True
                break
        if not dropped:
            return


Progress = Callable[[int, int], None]  # (candidates checked, ops in the smallest so far)


def reduce_mlir(
    text: str,
    fails: Callable[[str], bool],
    budget_s: float | None = None,
    progress: Progress | None = None,
    first_line: str = "",
) -> MlirReduction:
    """The smallest variant of ``text`` for which ``fails`` holds (the caller's "fails the
    same way"). When ``first_line`` names a line of a function, the search starts from
    the module cut to that function (``mlir_cut``: it and what it calls, made public) if
    that cut fails the same way, so its signature is free to change. Raises
    MlirReductionError when the program does not parse, holds no ops, or printed again
    does not fail the same way."""
    start = time.monotonic()
    ops_before = MlirReducer(text).ops_before
    cut_module = cut_to_failing_function(text, first_line) if first_line else None
    tested = 0
    if cut_module is not None and cut_module.dropped:
        tested += 1
        if fails(cut_module.text):
            text = cut_module.text
    reducer = MlirReducer(text)
    deadline = start + budget_s if budget_s is not None else None
    answers: dict[tuple[int, ...], bool] = {}
    by_text: dict[str, bool] = {}
    built: dict[tuple[int, ...], tuple[str, list[str]]] = {}
    smallest = reducer.ops_before

    def cut(subset: tuple[int, ...]) -> tuple[str, list[str]]:
        key = tuple(sorted(subset))
        if key not in built:
            built[key] = reducer.candidate(key)
        return built[key]

    def test(subset: tuple[int, ...]) -> bool:
        nonlocal tested, smallest
        key = tuple(sorted(subset))
        if key not in answers:
            candidate, names = cut(key)
            if candidate not in by_text:  # subsets that print the same are asked once
                by_text[candidate] = fails(candidate)
                tested += 1
                if by_text[candidate]:
                    smallest = min(smallest, len(names))
                if progress is not None:
                    progress(tested, smallest)
            answers[key] = by_text[candidate]
        return answers[key]

    whole = tuple(range(len(reducer.items)))
    if not test(whole):
        raise MlirReductionError(
            "the program, printed again by the MLIR bindings, does not fail the same way, "
            "so no part of it can be judged"
        )
    found, complete = ddmin(whole, test, deadline)
    reduced, names = cut(found)
    return MlirReduction(
        ops_before=ops_before,
        ops_after=len(names),
        text=reduced,
        op_names=names,
        complete=complete,
        tested=tested,
        elapsed_s=time.monotonic() - start,
        budget_s=budget_s,
    )
