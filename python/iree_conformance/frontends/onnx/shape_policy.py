"""Shapes when nobody says: the sizes a model's users would feed, decided from the model.

Each symbolic dim (a ``dim_param`` name, or an unnamed dim; ``"?"`` counts as unnamed)
gets a rule, and each rule a list of candidate sizes. ``ShapePlan.trials`` orders the
combinations tried: every dim at its first candidate; then one dim at a time through
its other candidates, the others at their first (an OCR recognizer that needs a height
of 48 at a width of 320 is found so); then every dim at its k-th candidate.
``model_inputs`` checks each trial with onnxruntime and keeps the first whose outputs
are non-empty and finite. The rules, first match wins:

* ``spec``: a spec gives the input's shape or the dim's size.
* ``fixed``: the model gives the size.
* ``batch``: axis 0 of an input of rank 2 or more: 1.
* ``image``: axis 2 or 3 of a rank-4 input whose axis 1 is fixed and at most 4 (NCHW),
  or axis 1 or 2 of one whose axis 3 is (NHWC): 320, 224, 48, 32, 640. 320 is a
  multiple of 64, so it survives six halvings of a detector's or a classifier's
  downsampling, and is a common deployment size; 48 and 32 are the heights of text-line
  images; a size of 1 would pool an image down to nothing.
* ``sequence``: axis 1 of a rank-2 or rank-3 input (a sequence of tokens, samples or
  frames): 128, 512, 32, then 1 (a state's batch-like axis).
* ``other``: 16, then 1.

A dim name shared by several inputs gets one size: its rule is the first input's (in
graph order) that names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iree_conformance.frontends.onnx.inputs import InputSpec
from iree_conformance.frontends.onnx.specs import ModelSpec

__all__ = ["CANDIDATES", "MAX_TRIALS", "DimRule", "ShapePlan", "plan_shapes"]

CANDIDATES: dict[str, tuple[int, ...]] = {
    "batch": (1,),
    "image": (320, 224, 48, 32, 640),
    "sequence": (128, 512, 32, 1),
    "other": (16, 1),
}
#: The most combinations of sizes a model is tried at (each is one onnxruntime run).
MAX_TRIALS = 12
_UNNAMED = ("", "?")


@dataclass(frozen=True)
class DimRule:
    """One symbolic dim: its key (dim_param, or ``input[axis]`` when unnamed), rule and
    candidate sizes."""

    key: str
    rule: str
    candidates: tuple[int, ...]


@dataclass(frozen=True)
class ShapePlan:
    """Per input, each axis: a fixed size or the key of a DimRule."""

    inputs: tuple[InputSpec, ...]
    axes: Mapping[str, tuple[int | str, ...]]
    dims: Mapping[str, DimRule]

    def trials(self, limit: int = MAX_TRIALS) -> list[dict[str, int]]:
        """The combinations of sizes to try, in order (see the module docstring)."""
        first = {k: d.candidates[0] for k, d in self.dims.items()}
        out = [first]
        for key, d in self.dims.items():
            out += [{**first, key: c} for c in d.candidates[1:]]
        rounds = max((len(d.candidates) for d in self.dims.values()), default=1)
        for k in range(1, rounds):
            out.append(
                {key: d.candidates[min(k, len(d.candidates) - 1)] for key, d in self.dims.items()}
            )
        unique: list[dict[str, int]] = []
        for sizes in out:
            if sizes not in unique:
                unique.append(sizes)
        return unique[:limit]

    def shapes(self, sizes: Mapping[str, int]) -> dict[str, tuple[int, ...]]:
        return {
            name: tuple(a if isinstance(a, int) else sizes[a] for a in axes)
            for name, axes in self.axes.items()
        }

    def symbolic(self) -> bool:
        return bool(self.dims)

    def describe(self, sizes: Mapping[str, int]) -> dict[str, dict[str, object]]:
        """Per dim key: its size and the rule that chose it, as an Outcome records it."""
        return {k: {"size": sizes[k], "rule": d.rule} for k, d in self.dims.items()}


def _is_small_fixed(d: object) -> bool:
    return isinstance(d, int) and 0 < d <= 4


def _rule_of(spec: InputSpec, axis: int) -> str:
    shape = spec.shape
    rank = len(shape)
    if axis == 0 and rank >= 2:
        return "batch"
    if rank == 4 and (
        (axis in (2, 3) and _is_small_fixed(shape[1]))
        or (axis in (1, 2) and _is_small_fixed(shape[3]))
    ):
        return "image"
    if axis == 1 and rank in (2, 3):
        return "sequence"
    return "other"


def plan_shapes(specs: Sequence[InputSpec], spec: ModelSpec | None = None) -> ShapePlan:
    """The plan for these inputs under ``spec``: given shapes and dims are ``spec``
    rules with one candidate."""
    spec = spec or ModelSpec()
    axes: dict[str, tuple[int | str, ...]] = {}
    dims: dict[str, DimRule] = {}
    for s in specs:
        rule_spec = spec.inputs.get(s.name)
        if rule_spec is not None and rule_spec.shape is not None:
            given = rule_spec.shape
            if len(given) != len(s.shape) and s.shape:
                raise ValueError(
                    f"{rule_spec.where}: input {s.name!r} has rank {len(s.shape)} "
                    f"({_show(s.shape)}) but the spec gives shape {_show(given)}"
                )
            for axis, (want, have) in enumerate(zip(given, s.shape)):
                if isinstance(have, int) and have > 0 and have != want:
                    raise ValueError(
                        f"{rule_spec.where}: input {s.name!r} has size {have} at axis {axis} "
                        f"({_show(s.shape)}) but the spec gives {_show(given)}"
                    )
            key_axes: list[int | str] = []
            for axis, want in enumerate(given):
                have = s.shape[axis] if axis < len(s.shape) else None
                if isinstance(have, int) and have > 0:
                    key_axes.append(have)
                    continue
                key = _key(s.name, axis, have)
                dims[key] = DimRule(key, "spec", (want,))
                key_axes.append(key)
            axes[s.name] = tuple(key_axes)
            continue
        key_axes = []
        for axis, d in enumerate(s.shape):
            if isinstance(d, int) and d >= 0:
                key_axes.append(d)  # fixed (0 is a real zero-size dim)
                continue
            key = _key(s.name, axis, d)
            if key not in dims:
                if key in spec.dims:
                    dims[key] = DimRule(key, "spec", (int(spec.dims[key]),))
                else:
                    rule = _rule_of(s, axis)
                    dims[key] = DimRule(key, rule, CANDIDATES[rule])
            key_axes.append(key)
        axes[s.name] = tuple(key_axes)
    return ShapePlan(tuple(specs), axes, dims)


def _key(input_name: str, axis: int, dim: object) -> str:
    if isinstance(dim, str) and dim.strip() not in _UNNAMED:
        return dim
    return f"{input_name}[{axis}]"


def _show(shape: Sequence[object]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape) or "scalar"
