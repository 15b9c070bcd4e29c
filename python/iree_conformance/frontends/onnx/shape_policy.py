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
* ``graph``: the graph says it (``graph_hints``): a symbolic channel dim, from the first
  Conv's weight.
* ``batch``: axis 0 of an input of rank 2 or more: 1.
* ``image``: axis 2 or 3 of a rank-4 input whose axis 1 is fixed and at most 4 (NCHW),
  or axis 1 or 2 of one whose axis 3 is (NHWC), or whose channels the graph gives:
  224, 320, 48, 32, 640. 224 is what classifiers are trained and deployed at; 320 is a
  multiple of 64, so it survives six halvings of a detector's downsampling; 48 and 32 are
  the heights of text-line images; a size of 1 would pool an image down to nothing.
* ``sequence``: axis 1 of a rank-2 or rank-3 input (a sequence of tokens, samples or
  frames): 128, 512, 32, then 1 (a state's batch-like axis); a model with position
  embeddings of P rows gets no candidate over P, and P itself first when P < 128 (a
  text model with 77 positions runs at 77, the length it was trained at).
* ``other``: 16, then 1.

A dim name shared by several inputs gets one size: its rule is the first input's (in
graph order) that names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iree_conformance.frontends.onnx.graph_hints import Hint
from iree_conformance.frontends.onnx.inputs import InputSpec
from iree_conformance.frontends.onnx.specs import ModelSpec

__all__ = ["CANDIDATES", "MAX_TRIALS", "DimRule", "ShapePlan", "plan_shapes"]

CANDIDATES: dict[str, tuple[int, ...]] = {
    "batch": (1,),
    "image": (224, 320, 48, 32, 640),
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
    why: str = ""  # where the graph said it (``graph`` rule, a sequence fitted to positions)


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
        return {
            k: {"size": sizes[k], "rule": d.rule, **({"why": d.why} if d.why else {})}
            for k, d in self.dims.items()
        }


def _is_small_fixed(d: object) -> bool:
    return isinstance(d, int) and 0 < d <= 4


def _rule_of(spec: InputSpec, axis: int, channels_known: bool = False) -> str:
    shape = spec.shape
    rank = len(shape)
    if axis == 0 and rank >= 2:
        return "batch"
    if rank == 4 and (
        (axis in (2, 3) and (_is_small_fixed(shape[1]) or channels_known))
        or (axis in (1, 2) and _is_small_fixed(shape[3]))
    ):
        return "image"
    if axis == 1 and rank in (2, 3):
        return "sequence"
    return "other"


def plan_shapes(
    specs: Sequence[InputSpec],
    spec: ModelSpec | None = None,
    *,
    channels: Mapping[tuple[str, int], Hint] | None = None,
    positions: Hint | None = None,
) -> ShapePlan:
    """The plan for these inputs under ``spec``: given shapes and dims are ``spec``
    rules with one candidate; ``channels`` and ``positions`` are what the graph says
    (``graph_hints``)."""
    spec = spec or ModelSpec()
    channels = channels or {}
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
                hint = channels.get((s.name, axis))
                if key in spec.dims:
                    dims[key] = DimRule(key, "spec", (int(spec.dims[key]),))
                elif hint is not None:
                    dims[key] = DimRule(key, "graph", (hint.size,), hint.why)
                else:
                    rule = _rule_of(s, axis, _channels_small(s, spec, channels))
                    dims[key] = _fitted(DimRule(key, rule, CANDIDATES[rule]), positions)
            key_axes.append(key)
        axes[s.name] = tuple(key_axes)
    return ShapePlan(tuple(specs), axes, dims)


_NO = Hint(0, "")


def _small(size: int) -> bool:
    return 0 < size <= 4


def _channels_small(s: InputSpec, spec: ModelSpec, channels: Mapping) -> bool:
    """Axis 1 of a rank-4 input is a small channel count the graph or a ``--dim`` gives."""
    if len(s.shape) != 4:
        return False
    given = spec.dims.get(_key(s.name, 1, s.shape[1]))
    if given is not None:
        return _small(int(given))
    return _small((channels.get((s.name, 1)) or _NO).size)


def _fitted(rule: DimRule, positions: Hint | None) -> DimRule:
    """A sequence dim whose candidates fit the model's position embeddings."""
    if rule.rule != "sequence" or positions is None:
        return rule
    limit = positions.size
    fits = tuple(c for c in rule.candidates if c <= limit)
    if fits == rule.candidates:
        return rule
    first = (limit,) if limit < rule.candidates[0] else ()
    candidates = tuple(dict.fromkeys(first + fits))
    why = f"at most {limit}: {positions.why}"
    return DimRule(rule.key, rule.rule, candidates, why)


def _key(input_name: str, axis: int, dim: object) -> str:
    if isinstance(dim, str) and dim.strip() not in _UNNAMED:
        return dim
    return f"{input_name}[{axis}]"


def _show(shape: Sequence[object]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape) or "scalar"
