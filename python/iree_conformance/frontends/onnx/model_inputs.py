"""A model's inputs when it ships none: its spec, else the shape rule, checked by onnxruntime.

``choose_inputs`` plans each input's shape (``shape_policy``), draws its values (a spec's
constant, range or distribution; an index input's ``[0, rows)``, see ``integer_roles``;
else the defaults of ``inputs``), and runs onnxruntime on them. A trial (one combination of sizes) whose reference
fails or is degenerate (every output empty, or any output non-finite) gives way to the
next trial. What was chosen, and why, is ``ChosenInputs.info``: an
Outcome records it under ``info["inputs"]``:

* ``seed``: the seed of the random values (input ``i`` draws from ``default_rng([seed, i])``);
* ``shapes``: {input: [sizes]};
* ``dims``: {dim: {"size", "rule"}}: each symbolic dim and the rule that chose it
  (``spec``, ``batch``, ``image``, ``sequence``, ``other``; see ``shape_policy``);
* ``values``: {input: how its values were drawn, and why};
* ``tried``: earlier trials and why onnxruntime's answer was not used (absent if none);
* ``spec``: the spec in force and its sources (absent if none);
* ``unjudged``: inputs whose random values are no verdict (shape-feeding or scalar
  integers without a spec), and why (absent if none);
* ``random``: a node whose outputs are random (``random_ops``), so that no run is a
  verdict (absent if none).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper

from iree_conformance.frontends.onnx.graph_hints import channel_hints, position_limit
from iree_conformance.frontends.onnx.inputs import (
    DEFAULT_SEED,
    INT_RANGE,
    InputGenerationError,
    InputSpec,
)
from iree_conformance.frontends.onnx.integer_roles import IntegerRole, integer_roles
from iree_conformance.frontends.onnx.random_ops import random_reason
from iree_conformance.frontends.onnx.reference import OnnxRuntimeReferenceError, run_onnxruntime
from iree_conformance.frontends.onnx.shape_policy import ShapePlan, plan_shapes
from iree_conformance.frontends.onnx.specs import InputRule, ModelSpec

__all__ = ["ChosenInputs", "choose_inputs", "degenerate", "draw_values"]

Reference = Callable[[Sequence[np.ndarray]], list[np.ndarray]]
_NOT_IMPLEMENTED = re.compile(
    r"Could not find an implementation for (\w+)\((\d+)\) node with name '([^']*)'"
)
_ORT_SOURCE = re.compile(r"/onnxruntime_src/\S+ (?:[\w:~<>]+\([^)]*\)\s*(?:const\s*)?)?")
_NO_OP = re.compile(
    r"Op type not registered '(?P<op>[^']+)'(?: in domain '(?P<domain>[^']*)')?"
    r"|(?P<domain2>[\w.]+):(?P<op2>\w+)\(-?\d+\) is not a registered function/op"
)


@dataclass
class ChosenInputs:
    arrays: list[np.ndarray]
    reference: list[np.ndarray] | None
    shapes: dict[str, tuple[int, ...]]
    info: dict[str, Any]
    symbolic: bool  # the model has symbolic dims (a ``:dynamic`` case is meaningful)
    problem: str | None = None  # no trial gave a sound reference: what to specify
    skip: str | None = None  # the reference cannot run this model at all (an op it lacks)
    unjudged: str | None = None  # random values of these inputs are no verdict
    rejected: list[str] = field(default_factory=list)


def degenerate(outputs: Sequence[np.ndarray]) -> str | None:
    """Why outputs are no reference to judge by: every one empty, or one non-finite."""
    arrays = [np.asarray(o) for o in outputs]
    if not arrays or all(a.size == 0 for a in arrays):
        return "every output is empty"
    for i, a in enumerate(arrays):
        if (
            a.dtype.kind in "fc"
            and a.size
            and not np.isfinite(
                a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
            ).all()
        ):
            return f"output {i} holds non-finite values (NaN or inf)"
    return None


def _dtype(spec: InputSpec) -> np.dtype:
    if spec.elem_type == onnx.TensorProto.STRING:
        raise InputGenerationError(
            f"input '{spec.name}' is a string tensor; no values are generated for it: give the "
            "model a test_data_set_0 folder with its inputs"
        )
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(spec.elem_type))
    except Exception as e:
        raise InputGenerationError(
            f"input '{spec.name}' has ONNX element type {spec.elem_type}, which has no numpy dtype"
        ) from e


def draw_values(
    spec: InputSpec,
    shape: tuple[int, ...],
    rng: np.random.Generator,
    rule: InputRule | None,
    role: IntegerRole | None,
) -> tuple[np.ndarray, str]:
    """One input's values and how they were drawn."""
    dtype = _dtype(spec)
    is_int = np.issubdtype(dtype, np.integer)
    if rule is not None and rule.value is not None:
        why = f" ({rule.reason})" if rule.reason else ""
        return np.full(shape, rule.value).astype(dtype), f"spec: constant {rule.value:g}{why}"
    if rule is not None and rule.sets_values:
        low = rule.low if rule.low is not None else (INT_RANGE[0] if is_int else -1.0)
        high = rule.high if rule.high is not None else (INT_RANGE[1] if is_int else 1.0)
        why = f" ({rule.reason})" if rule.reason else ""
        if rule.distribution == "normal":
            mid, sd = (low + high) / 2, (high - low) / 6
            values = np.clip(rng.normal(mid, sd, size=shape), low, high)
            if is_int:
                values = np.floor(values).clip(low, math.ceil(high) - 1)
            return values.astype(dtype), f"spec: normal in [{low:g}, {high:g}){why}"
        if is_int:
            ints = rng.integers(math.ceil(low), math.ceil(high), size=shape)
            return ints.astype(dtype), f"spec: uniform integers in [{low:g}, {high:g}){why}"
        values = rng.uniform(low, high, size=shape).astype(np.float32)
        return values.astype(dtype), f"spec: uniform in [{low:g}, {high:g}){why}"
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_), "uniform random booleans"
    if is_int:
        if role is not None and role.kind == "index" and role.high:
            ints = rng.integers(0, role.high, size=shape)
            return ints.astype(dtype), f"index in [0, {role.high}): {role.why}"
        if role is not None and role.kind == "mask":
            return _mask(shape, rng).astype(dtype), f"a padding mask of 1 then 0: {role.why}"
        values = rng.integers(INT_RANGE[0], INT_RANGE[1], size=shape).astype(dtype)
        if role is not None and role.needs_spec:
            return values, f"random in [{INT_RANGE[0]}, {INT_RANGE[1]}), no verdict: {role.why}"
        return values, f"uniform integers in [{INT_RANGE[0]}, {INT_RANGE[1]})"
    values = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(dtype)
    return values, "uniform in [-1, 1)"


def _mask(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """1 for the real positions of each row (at least one, at least half) then 0 for padding,
    along the last axis, as a tokenizer pads a batch."""
    if not shape or shape[-1] == 0:
        return np.ones(shape, dtype=np.int64)
    length = shape[-1]
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    real = rng.integers((length + 1) // 2, length + 1, size=rows)
    mask = (np.arange(length)[None, :] < real[:, None]).astype(np.int64)
    return mask.reshape(shape)


#: The most one input may take while it is drawn (float inputs are drawn as float64 first).
MAX_INPUT_BYTES = 2 * 2**30


class InputTooLarge(ValueError):
    """An input whose shape would take more memory than MAX_INPUT_BYTES to draw."""


def draw_bytes(shape: Sequence[int], dtype: np.dtype) -> int:
    """The memory drawing an input of this shape and type takes (float64 first)."""
    count = 1
    for d in shape:
        count *= int(d)
    return count * max(8, np.dtype(dtype).itemsize)


def check_input_size(name: str, shape: Sequence[int], dtype: np.dtype, why: str = "") -> None:
    """Refuses, before anything is allocated, an input too large to draw; says how large."""
    size = draw_bytes(shape, dtype)
    if size > MAX_INPUT_BYTES:
        dims = "x".join(str(int(d)) for d in shape)
        raise InputTooLarge(
            f"input {name!r}: shape {dims} of {np.dtype(dtype).name} would take "
            f"{size / 2**30:,.1f} GiB to draw, over the {MAX_INPUT_BYTES // 2**30} GiB an input "
            f"may take{why}; give smaller sizes (--dim, --input-shape or the model's spec)"
        )


def _draw(plan, sizes, specs, spec, roles, seed):
    shapes = plan.shapes(sizes)
    for s in specs:
        check_input_size(s.name, shapes[s.name], _dtype(s))
    arrays, values = [], {}
    for i, s in enumerate(specs):
        rng = np.random.default_rng([seed, i])
        array, how = draw_values(s, shapes[s.name], rng, spec.inputs.get(s.name), roles.get(s.name))
        arrays.append(array)
        values[s.name] = how
    return shapes, arrays, values


def _op_skip(message: str) -> str | None:
    """A skip reason naming the op, where onnxruntime lacks one the model uses."""
    m = _NOT_IMPLEMENTED.search(message)
    if m:
        return (
            f"onnxruntime has no kernel for op {m.group(1)} (opset {m.group(2)}, node "
            f"{m.group(3)!r}) at these input types: there is no reference to check IREE against"
        )
    m = _NO_OP.search(message)
    if m:
        op = m.group("op") or m.group("op2")
        domain = m.group("domain") or m.group("domain2")
        where = f" in domain {domain!r}" if domain else ""
        return (
            f"onnxruntime does not know op {op}{where}: there is no reference to check IREE against"
        )
    return None


def choose_inputs(
    model: onnx.ModelProto,
    specs: Sequence[InputSpec],
    spec: ModelSpec | None = None,
    *,
    reference: Reference | None = None,
    source: Path | str | None = None,
    seed: int | None = None,
) -> ChosenInputs:
    """Inputs for ``model`` (``specs`` in graph-input order) and onnxruntime's outputs.

    ``source`` is what onnxruntime loads (a path, to keep external data); default the
    model itself. ``reference`` replaces onnxruntime (tests).
    """
    spec = spec or ModelSpec()
    seed = spec.seed if spec.seed is not None else (DEFAULT_SEED if seed is None else seed)
    roles = integer_roles(model)
    plan: ShapePlan = plan_shapes(
        specs, spec, channels=channel_hints(model), positions=position_limit(model)
    )
    run = reference or (lambda xs: run_onnxruntime(source if source is not None else model, xs))
    tried: list[dict[str, Any]] = []
    symbolic = plan.symbolic()
    trials = plan.trials()
    for sizes in trials:
        shapes, arrays, values = _draw(plan, sizes, specs, spec, roles, seed)
        info = _info(plan, sizes, shapes, seed, values, spec, tried, roles)
        try:
            outputs = run(arrays)
        except OnnxRuntimeReferenceError as e:
            skip = _op_skip(str(e))
            if skip:
                return ChosenInputs(arrays, None, shapes, info, symbolic, skip=skip)
            why = f"onnxruntime failed: {_short(e)}"
            if "cannot load the model" in str(e):
                # Not a question of shapes: no other trial loads it either.
                return ChosenInputs(arrays, None, shapes, info, symbolic, problem=why)
            tried.append({"shapes": _lists(shapes), "why": why})
            continue
        bad = degenerate(outputs)
        if bad:
            tried.append({"shapes": _lists(shapes), "why": f"onnxruntime's reference: {bad}"})
            continue
        unjudged = _unjudged(specs, spec, roles)
        info = _info(plan, sizes, shapes, seed, values, spec, tried, roles)
        if unjudged:
            info["unjudged"] = unjudged
        reasons = [f"{k}: {v}" for k, v in unjudged.items()]
        random = random_reason(model)
        if random:  # onnxruntime's outputs are one draw of many: no reference
            info["random"] = random
            reasons.append(random)
        return ChosenInputs(
            arrays, outputs, shapes, info, symbolic, unjudged="; ".join(reasons) or None
        )
    shapes, arrays, values = _draw(plan, trials[0], specs, spec, roles, seed)
    info = _info(plan, trials[0], shapes, seed, values, spec, tried, roles)
    problem = _problem(plan, tried, specs, _unjudged(specs, spec, roles))
    return ChosenInputs(arrays, None, shapes, info, symbolic, problem=problem)


def _short(e: BaseException) -> str:
    """onnxruntime's message without the file path prefix, first line, at most 300 chars."""
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    text = text.split(": onnxruntime failed to run it: ", 1)[-1]
    # Drop onnxruntime's source location and C++ signature: the reason follows them.
    text = _ORT_SOURCE.sub("", text).replace("[ONNXRuntimeError] : ", "")
    return text[:300]


def _lists(shapes: dict[str, tuple[int, ...]]) -> dict[str, list[int]]:
    return {k: list(v) for k, v in shapes.items()}


def _info(plan, sizes, shapes, seed, values, spec, tried, roles) -> dict[str, Any]:
    info: dict[str, Any] = {
        "seed": seed,
        "shapes": _lists(shapes),
        "dims": plan.describe(sizes),
        "values": values,
    }
    if tried:
        info["tried"] = tried
    if not spec.empty:
        info["spec"] = spec.describe()
    return info


def _unjudged(specs, spec: ModelSpec, roles) -> dict[str, str]:
    out = {}
    for s in specs:
        role = roles.get(s.name)
        rule = spec.inputs.get(s.name)
        if role is not None and role.needs_spec and not (rule is not None and rule.sets_values):
            out[s.name] = (
                f"{role.why}; random values are no verdict: give its value in a spec "
                f"([inputs.{s.name}] value = ... in <model>.inputs.toml)"
            )
    return out


def _problem(plan: ShapePlan, tried, specs, unjudged: dict[str, str]) -> str:
    lines = "; ".join(f"{_show(t['shapes'])}: {t['why']}" for t in tried[:3])
    more = f" (and {len(tried) - 3} more)" if len(tried) > 3 else ""
    hints = []
    if unjudged:
        hints.append(
            "give the values of "
            + ", ".join(unjudged)
            + " ([inputs.NAME] value = ... in <model>.inputs.toml): "
            + "; ".join(f"{k}: {v.split(';')[0]}" for k, v in unjudged.items())
        )
    if plan.dims:
        hints.append(
            f"give the sizes it runs at: {dim_options(plan)} (or --input-shape INPUT=AxBxC, "
            "or [dims] in <model>.inputs.toml)"
        )
    if not hints:
        names = ", ".join(s.name for s in specs)
        hints.append(f"give the inputs' values ({names}) in <model>.inputs.toml")
    return f"no input shapes gave a usable onnxruntime reference ({lines}{more}): " + "; or ".join(
        hints
    )


def dim_options(plan: ShapePlan) -> str:
    """The exact ``--dim`` options to give: a size where one rule alone decides it (a
    spec, the graph, the batch), ``SIZE`` where a person must say."""
    sure = ("spec", "graph", "batch")
    return " ".join(
        f"--dim {k}={d.candidates[0] if d.rule in sure else 'SIZE'}" for k, d in plan.dims.items()
    )


def _show(shapes: dict[str, list[int]]) -> str:
    return ", ".join(f"{k}={'x'.join(map(str, v)) or 'scalar'}" for k, v in shapes.items())
