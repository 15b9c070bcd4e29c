# Not named bisect.py: interpreter.py runs as a script from this folder, and a bisect.py
# here would shadow the standard library's bisect in its child.
"""Numerics triage for StableHLO: the first op of ``@main`` whose result diverges from the
StableHLO reference interpreter.

The probe is the program with every result of every op of ``@main``'s body returned as an
extra output (``probe_program``, with IREE's MLIR Python bindings). It runs on both sides,
the candidate (the caller's IREE run, ``run_candidate``) and the interpreter
(``interpreter.run_interpreter``), and the ops are walked in program order to the first
result the final comparison would reject (``onnx.bisect.compare_tensor``: the same
tolerance and dtype rules). Every earlier result agreed, so the op's operands agree: the op
itself diverges. Ops inside regions (a ``while`` body, a ``reduce`` computation) are judged
through the result of the op that holds them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from iree_conformance.frontends.probe_compare import ProbeAbout, ProbeReport, Runner, probe_report
from iree_conformance.frontends.stablehlo.interpreter import run_interpreter

__all__ = ["ProbedOp", "bisect_stablehlo", "probe_program"]


@dataclasses.dataclass(frozen=True)
class ProbedOp:
    """One op result returned by the probe: where it is and what it is."""

    index: int  # the op's place in @main's body, from 0
    name: str  # stablehlo.add
    line: int | None  # its line in the program text
    result: int  # which of the op's results
    type: str  # tensor<4xf32>

    def where(self) -> str:
        at = f" at line {self.line}" if self.line is not None else ""
        return f"op #{self.index} {self.name}{at} (result {self.result}, {self.type})"


def probe_program(text: str, entry: str = "main") -> tuple[str, int, list[ProbedOp]]:
    """(the probe's text, how many results the entry had, the probed op results in order)."""
    from iree.compiler import ir

    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
        main = next(
            (
                op.operation
                for op in module.body.operations
                if op.operation.name == "func.func"
                and ir.StringAttr(op.operation.attributes["sym_name"]).value == entry
            ),
            None,
        )
        if main is None:
            raise ValueError(f"the program has no func.func @{entry} to bisect")
        block = main.regions[0].blocks[0]
        ops = list(block.operations)
        terminator = ops[-1].operation
        probed: list[ProbedOp] = []
        extra: list = []
        for index, op in enumerate(ops[:-1]):
            op = op.operation
            for number, value in enumerate(op.results):
                if not str(value.type).startswith("tensor<"):
                    continue
                probed.append(ProbedOp(index, op.name, _line(op.location), number, str(value.type)))
                extra.append(value)
        returned = list(terminator.operands)
        with ir.InsertionPoint(terminator):
            ir.Operation.create(terminator.name, operands=[*returned, *extra])
        terminator.erase()
        old = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        new = ir.FunctionType.get(list(old.inputs), [*old.results, *(v.type for v in extra)])
        main.attributes["function_type"] = ir.TypeAttr.get(new)
        if "res_attrs" in main.attributes:
            del main.attributes["res_attrs"]
        return str(module), len(returned), probed


def _line(location) -> int | None:
    import re

    match = re.search(r":(\d+):\d+", str(location))
    return int(match.group(1)) if match else None


def bisect_stablehlo(
    text: str,
    inputs: Sequence[np.ndarray],
    run_candidate: Runner,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    run_reference: Runner = run_interpreter,
    entry: str = "main",
) -> ProbeReport:
    """Run the probe on both sides; report the first op whose result diverges."""
    probe, returned, probed = probe_program(text, entry)
    expected = run_reference(probe, list(inputs))
    actual = run_candidate(probe, list(inputs))
    labels = [op.where() for op in probed]
    about = ProbeAbout(
        "op result", f"of @{entry}", "the StableHLO interpreter", "its operands agree"
    )
    return probe_report(labels, expected, actual, returned, (rtol, atol), about)
