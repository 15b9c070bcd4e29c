"""Ops whose outputs are random, so that torch eager cannot judge IREE's run of a program.

An op torch tags ``nondeterministic_seeded`` (``rand``, ``bernoulli``, a training-mode
``dropout`` or ``native_dropout``, ``rrelu_with_noise`` in training, ...) draws values on
every run: torch and IREE each draw their own, so neither a match nor a mismatch says
anything about IREE (as ONNX's Random* nodes, ``frontends/onnx/random_ops.py``). Such an op
called with its ``train``/``training`` argument false, or with a drop probability
(``dropout_p``, ``p``) of 0 (``scaled_dot_product_attention``'s default), draws nothing and
is left alone.
IREE's compile of the program is still a verdict; its run is not.
"""

from __future__ import annotations

from typing import Any

__all__ = ["random_reason"]


def _arguments(node: Any, module: Any) -> dict[str, Any]:
    """The op's arguments by name, defaults filled in (empty where torch cannot say)."""
    normalized = node.normalized_arguments(module, normalize_to_only_use_kwargs=True)
    return dict(normalized.kwargs) if normalized is not None else {}


def _training(kwargs: dict[str, Any]) -> bool | None:
    """The op's ``train``/``training`` argument: None where it has none (or unknown)."""
    for name in ("train", "training"):
        if isinstance(kwargs.get(name), bool):
            return bool(kwargs[name])
    return None


def _never_drops(kwargs: dict[str, Any]) -> bool:
    """A drop probability (``dropout_p``, ``p``) of exactly 0: nothing is drawn."""
    return any(
        isinstance(kwargs.get(name), int | float) and kwargs[name] == 0
        for name in ("dropout_p", "p")
    )


def random_reason(program: Any) -> str | None:
    """One line naming the exported program's first random op, or None."""
    import torch

    for module in program.graph_module.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            tags = getattr(node.target, "tags", None) if node.op == "call_function" else None
            if not tags or torch.Tag.nondeterministic_seeded not in tags:
                continue
            kwargs = _arguments(node, module)
            training = _training(kwargs)
            if training is False or _never_drops(kwargs):
                continue
            reason = f"{node.target} draws random values on every run (torch and IREE each draw their own)"
            if training:
                reason += (
                    "; call it with training off (module.eval(), or training=False) for a verdict"
                )
            return reason
    return None
