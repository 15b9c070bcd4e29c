"""Another preparation of a case's program, compiled beside a failing one.

A frontend that prepares programs one way (torch: iree-turbine's decompositions) can name
another (torch's core ATen decompositions). When the case fails at import or compile, the
engine imports and compiles (never runs) the other one (``engine/preparations.py``): its
result is information in the Outcome, never the verdict, which stays the one of IREE's
own preparation.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from iree_conformance.model.jobs import Program


@dataclasses.dataclass(frozen=True)
class OtherPreparation:
    used: str  # the case's own preparation, e.g. "iree-turbine's decompositions"
    other: str  # the one tried beside it, e.g. "torch's core decompositions"
    program: Program | None  # None: the other preparation itself failed (``error`` says how)
    error: str = ""


def preparation_steps(info: dict[str, Any]) -> list[str]:
    """Each step the harness took beyond the program as given, from an Outcome's ``info``:
    an ONNX model's opset upgrade (only where its opset was below the one IREE's
    documented flow imports at) and dims fixed with their values (the static compile); a
    torch case's export, eval() and preparation (``torch_steps``); a JAX case's lowering;
    float64 kept. Recorded as ``info["preparation"]`` for users' programs
    (``Case.users_program``) and shown beside the verdict."""
    steps = []
    old, new = info.get("opset_from"), info.get("opset_to")
    if old is not None and new is not None and old != new:
        steps.append(
            f"opset {old} upgraded to {new} (IREE's documented flow: "
            f"iree-import-onnx --opset-version {new})"
        )
    inputs = info.get("inputs") or {}
    dims = inputs.get("dims") or {}
    if inputs.get("compiled") == "static" and dims:
        fixed = ", ".join(f"{k}={d.get('size')}" for k, d in dims.items())
        steps.append(f"dims fixed: {fixed} (the model as exported is the :dynamic case)")
    steps += torch_steps(info.get("torch") or {})
    jax = info.get("jax") or {}
    if jax.get("lowering"):
        steps.append(str(jax["lowering"]))
    if info.get("f64_kept"):
        steps.append("float64 kept (--iree-input-demote-f64-to-f32=false, as IREE's ONNX CI)")
    return steps


def torch_steps(torch: dict[str, Any]) -> list[str]:
    """A torch case's steps (``info["torch"]``, frontends/torch_export/export.py): how
    torch.export ran, eval(), Python scalars as 0-d tensors, iree-turbine's
    decompositions, and a constant reference's note (a weak check, judged all the same)."""
    steps = []
    mode = str(torch.get("export") or "")
    if mode == "non-strict":
        steps.append("exported by torch.export.export, non-strict (torch's default)")
    elif mode:
        steps.append(f"exported by torch.export.export, {mode}")
    if torch.get("eval"):
        steps.append("module.eval() before export and torch eager (eval_mode=False keeps training)")
    if torch.get("scalars"):
        which = ", ".join(str(i) for i in torch["scalars"])
        steps.append(f"Python scalar output(s) {which} returned as 0-d tensors")
    if torch.get("preparation") == "iree-turbine":
        steps.append(
            "iree-turbine's AOT decompositions and FX importer (as iree.turbine.aot.export)"
        )
    if torch.get("reference"):
        steps.append(f"reference {torch['reference']}")
    return steps


def bare_defaults_line(info: dict[str, Any]) -> str | None:
    """Where IREE's tools at their defaults (no ``--opset-version``) fail the model as
    given and the documented flow did not: one line, an IREE bug worth a report."""
    bare = info.get("bare_defaults") or {}
    if not bare.get("fails_at"):
        return None
    return (
        f"IREE's tools at their defaults (iree-import-onnx without --opset-version, opset "
        f"{bare.get('opset')}) fail at {bare['fails_at']}: {bare.get('first_line', '')} "
        "(the documented flow passes that stage: an IREE bug worth a report)"
    )
