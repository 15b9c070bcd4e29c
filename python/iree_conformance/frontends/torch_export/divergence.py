"""Numerics triage for torch: the first FX node whose value diverges from torch eager.

The program IREE compiled is the ExportedProgram after iree-turbine's decompositions
(``export.prepare``). Its unlifted module is widened: the value of every ``call_function``
node that is a tensor becomes an extra output (after the program's own). torch eager runs
the widened module (the reference of every node), and the widened module is exported and
imported as the case was (at the example inputs' shapes) for IREE (``run_candidate``).
The nodes are walked in graph order (a topological order) to the first value the final
comparison rejects (``probe_compare.first_divergence``); every earlier node agreed, so its
inputs agree. The node is named with its ATen op and the source line that made it (the
last frame of its stack trace outside torch and this harness, when there is one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iree_conformance.frontends.probe_compare import ProbeAbout, ProbeReport, Runner, probe_report
from iree_conformance.frontends.torch_export.export import build, flatten, prepare, to_numpy

__all__ = ["as_tensor", "bisect_torch", "case_program", "node_label", "widened"]

_ABOUT = ProbeAbout("FX node value", "of the decomposed program", "torch eager", "its inputs agree")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in [^\n]*\n\s*([^\n]*)')


def case_program(listed: Any, pt2: Path | None) -> Any:
    """The case's ExportedProgram, exported again (before any decomposition)."""
    import torch

    from iree_conformance.frontends.torch_export import pt2 as pt2_files
    from iree_conformance.frontends.torch_export.folder import find_case

    if pt2 is not None:
        return pt2_files.load(pt2)
    module, args, dynamic = build(find_case(Path(listed.source), listed.name))
    module.eval()
    return torch.export.export(module, args, dynamic_shapes=dynamic)


def node_label(index: int, node: Any) -> str:
    """``FX node #3 mul (aten.mul.Tensor) at model.py:8 `return torch.softmax(y*2)```."""
    import torch

    # The program's own frames: neither torch's nor the harness's (its module wrapper).
    skipped = (str(Path(torch.__file__).parent), str(Path(__file__).parents[2]))
    frames = _FRAME.findall(node.meta.get("stack_trace") or "")
    own = [f for f in frames if not f[0].startswith(skipped)]
    where = ""
    if own:
        file, line, code = own[-1]
        where = f" at {Path(file).name}:{line} `{code.strip()}`"
    return f"FX node #{index} {node.name} ({node.target}){where}"


def widened(program: Any) -> tuple[Any, int, list[str]]:
    """(the decomposed program's module with every tensor node's value returned after its
    own outputs, how many outputs it had, a label per added output)."""
    import torch
    from iree.turbine.aot.decompositions import current_aot_decompositions

    module = program.run_decompositions(current_aot_decompositions()).module()
    graph = module.graph
    output = next(n for n in graph.nodes if n.op == "output")
    own = list(flatten(output.args[0]))
    probes = [
        (index, node)
        for index, node in enumerate(graph.nodes)
        if node.op == "call_function" and isinstance(node.meta.get("val"), torch.Tensor)
    ]
    graph.set_codegen(torch.fx.graph.CodeGen())  # flat inputs, flat outputs
    output.args = (tuple([*own, *(node for _, node in probes)]),)
    module.recompile()
    return module, len(own), [node_label(i, node) for i, node in probes]


def as_tensor(array: np.ndarray) -> Any:
    """The case's input as torch gets it: bfloat16 (ml_dtypes) by its bits."""
    import torch

    a = np.array(array)
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def bisect_torch(
    program: Any,
    inputs: Sequence[np.ndarray],
    run_candidate: Runner,
    *,
    rtol: float | None = None,
    atol: float | None = None,
) -> ProbeReport:
    """Run the widened program on torch eager and on IREE; report the first FX node
    whose value diverges."""
    import torch

    module, returned, labels = widened(program)
    args = tuple(as_tensor(x) for x in inputs)
    with torch.no_grad():
        expected = [to_numpy(t) for t in flatten(module(*[a.clone() for a in args]))]
    text, _ = prepare(torch.export.export(module, args))
    actual = run_candidate(text, list(inputs))
    return probe_report(labels, expected, actual, returned, (rtol, atol), _ABOUT)
