"""Input specs: which shapes and values a model's inputs get, said by its user.

One format, read from four places (later ones win, input by input and dim by dim):

1. a zoo manifest overlay (``--input-specs FILE``): ``[models."<name>"]`` tables keyed by
   the zoo name (the model file's stem, ``mnist-12``);
2. a folder's ``models.toml``: ``[models."<path>"]`` tables keyed by the model's path
   relative to that folder (``det/model.onnx``);
3. a file beside the model: ``<stem>.inputs.toml`` beside ``<stem>.onnx``, one spec at
   its top level;
4. the command line: ``--dim NAME=SIZE`` and ``--input-shape INPUT=1x3x224x224``.

A spec (the top level of an ``.inputs.toml`` file, or one ``[models."..."]`` table)::

    seed = 7                      # optional: the seed of the random values
    [dims]                        # sizes of symbolic dims, by the model's dim_param name
    height = 320
    width = 320
    [inputs.sr]                   # one input, by name
    value = 16000                 # a constant (also: distribution = "constant")
    reason = "the sample rate"
    [inputs.x]
    shape = "1x3x320x320"         # or [1, 3, 320, 320]
    range = [0.0, 1.0]            # [low, high) of the uniform draw
    distribution = "normal"       # uniform (default), normal (mean 0 sd 1 scaled to range) or constant

A malformed spec, an unknown key, or an input or dim the model does not have is a
``SpecError`` that names the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from iree_conformance.common.errors import ManifestError
from iree_conformance.common.tomlio import TomlError, loads_toml

__all__ = [
    "DISTRIBUTIONS",
    "FOLDER_SPECS",
    "InputRule",
    "ModelSpec",
    "SpecError",
    "beside_path",
    "from_command_line",
    "load_folder_specs",
    "load_model_spec",
    "load_overlay",
    "load_toml_spec_text",
    "parse_dim",
    "parse_input_shape",
    "parse_shape",
    "spec_for_file",
]

FOLDER_SPECS = "models.toml"
DISTRIBUTIONS = ("uniform", "normal", "constant")
_INPUT_KEYS = {"shape", "range", "distribution", "value", "reason"}
_SPEC_KEYS = {"seed", "dims", "inputs", "reason"}


class SpecError(ManifestError, ValueError):
    """A malformed input spec, or one that names what the model does not have."""


@dataclass(frozen=True)
class InputRule:
    """What one input's spec says; None where it says nothing."""

    shape: tuple[int, ...] | None = None
    low: float | None = None
    high: float | None = None
    distribution: str | None = None
    value: float | None = None
    reason: str = ""
    where: str = ""  # file:line, for messages

    def merged(self, over: InputRule) -> InputRule:
        """This rule with every field ``over`` sets replaced by over's."""
        return InputRule(
            shape=over.shape if over.shape is not None else self.shape,
            low=over.low if over.low is not None else self.low,
            high=over.high if over.high is not None else self.high,
            distribution=over.distribution or self.distribution,
            value=over.value if over.value is not None else self.value,
            reason=over.reason or self.reason,
            where=over.where or self.where,
        )

    @property
    def sets_values(self) -> bool:
        return self.value is not None or self.low is not None or self.distribution is not None


@dataclass(frozen=True)
class ModelSpec:
    """Dims by name and rules by input name, with where each came from."""

    dims: Mapping[str, int] = field(default_factory=dict)
    inputs: Mapping[str, InputRule] = field(default_factory=dict)
    seed: int | None = None
    sources: tuple[str, ...] = ()
    dim_where: Mapping[str, str] = field(default_factory=dict)

    def merged(self, over: ModelSpec) -> ModelSpec:
        inputs = dict(self.inputs)
        for name, rule in over.inputs.items():
            inputs[name] = inputs[name].merged(rule) if name in inputs else rule
        return ModelSpec(
            dims={**self.dims, **over.dims},
            inputs=inputs,
            seed=over.seed if over.seed is not None else self.seed,
            sources=self.sources + over.sources,
            dim_where={**self.dim_where, **over.dim_where},
        )

    @property
    def empty(self) -> bool:
        return not (self.dims or self.inputs or self.seed is not None)

    def check_against(
        self, input_names: Iterable[str], dim_names: Iterable[str], model: str, strict: bool = True
    ) -> ModelSpec:
        """Raises SpecError for an input or dim the model lacks (file:line named).

        With ``strict=False`` (command-line specs given to many models) such entries are
        dropped instead: each model takes the part of the spec that is about it.
        """
        names, dims = set(input_names), set(dim_names)
        bad_inputs = [n for n in self.inputs if n not in names]
        bad_dims = [d for d in self.dims if d not in dims]
        if strict and (bad_inputs or bad_dims):
            if bad_inputs:
                where = self.inputs[bad_inputs[0]].where
                what = f"input {bad_inputs[0]!r}, which {model} does not have (its inputs: {sorted(names)})"
            else:
                where = self.dim_where.get(bad_dims[0], "")
                what = f"dim {bad_dims[0]!r}, which no input of {model} has (its symbolic dims: {sorted(dims) or 'none'})"
            raise SpecError(
                f"{where or '<spec>'}: the spec names {what}; fix the name or remove it"
            )
        return replace(
            self,
            inputs={k: v for k, v in self.inputs.items() if k in names},
            dims={k: v for k, v in self.dims.items() if k in dims},
        )

    def describe(self) -> dict[str, Any]:
        """The spec as an Outcome records it."""
        return {
            "sources": list(self.sources),
            "dims": dict(self.dims),
            "inputs": {
                name: {
                    k: v
                    for k, v in {
                        "shape": list(r.shape) if r.shape else None,
                        "range": [r.low, r.high] if r.low is not None else None,
                        "distribution": r.distribution,
                        "value": r.value,
                        "reason": r.reason or None,
                    }.items()
                    if v is not None
                }
                for name, r in self.inputs.items()
            },
        }


# -- parsing -----------------------------------------------------------------------------
_SHAPE_TEXT = re.compile(r"^\d+(x\d+)*$")


def parse_shape(value: Any, where: str) -> tuple[int, ...]:
    """``"1x3x224x224"``, ``[1, 3, 224, 224]`` or ``""``/``[]`` (a scalar)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("", "scalar"):
            return ()
        if not _SHAPE_TEXT.match(text):
            raise SpecError(f"{where}: shape {value!r} is not like 1x3x224x224")
        return tuple(int(d) for d in text.split("x"))
    if isinstance(value, list) and all(isinstance(d, int) and d >= 0 for d in value):
        return tuple(value)
    raise SpecError(
        f"{where}: shape {value!r} must be a string like 1x3x224x224 or a list of sizes"
    )


def _line_of(text: str, *keys: str) -> int | None:
    """The first line that mentions the last of keys after the earlier ones (a best
    effort: tomllib gives no positions)."""
    lines = text.splitlines()
    start = 0
    for key in keys:
        pattern = re.compile(rf"(^|[\s.\[\"']){re.escape(key)}([\s.\]\"'=]|$)")
        for i in range(start, len(lines)):
            if pattern.search(lines[i].split("#", 1)[0]):
                start = i
                break
        else:
            return start + 1 if start else None
    return start + 1


def _number(value: Any, where: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(f"{where}: {what} must be a number, got {value!r}")
    return value


def _refuse_unknown(raw: dict, known: set[str], head: Callable[[str], str]) -> None:
    """SpecError for the first key of raw that is not known; head(key) says where it is."""
    unknown = sorted(set(raw) - known)
    if unknown:
        key = unknown[0]
        raise SpecError(f"{head(key)} unknown key {key!r}; known: {sorted(known)}")


def _input_rule(name: str, raw: Any, where: str) -> InputRule:
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: inputs.{name} must be a table, got {raw!r}")
    _refuse_unknown(raw, _INPUT_KEYS, lambda _: f"{where}: inputs.{name} has")
    shape = parse_shape(raw["shape"], where) if "shape" in raw else None
    low = high = None
    if "range" in raw:
        rng = raw["range"]
        if not (isinstance(rng, list) and len(rng) == 2):
            raise SpecError(f"{where}: inputs.{name}.range must be [low, high], got {rng!r}")
        low, high = (_number(v, where, f"inputs.{name}.range") for v in rng)
        if not low < high:
            raise SpecError(f"{where}: inputs.{name}.range [{low}, {high}] needs low < high")
    distribution = raw.get("distribution")
    if distribution is not None and distribution not in DISTRIBUTIONS:
        raise SpecError(
            f"{where}: inputs.{name}.distribution {distribution!r} is not one of {list(DISTRIBUTIONS)}"
        )
    value = _number(raw["value"], where, f"inputs.{name}.value") if "value" in raw else None
    if distribution == "constant" and value is None:
        raise SpecError(f"{where}: inputs.{name}: distribution 'constant' needs a value")
    if value is not None and distribution not in (None, "constant"):
        raise SpecError(
            f"{where}: inputs.{name}: a value is a constant; drop distribution or use 'constant'"
        )
    reason = raw.get("reason", "")
    if not isinstance(reason, str):
        raise SpecError(f"{where}: inputs.{name}.reason must be a string")
    return InputRule(shape, low, high, distribution, value, reason, where)


def _spec(raw: Any, path: str, text: str, prefix: tuple[str, ...] = ()) -> ModelSpec:
    def where(*keys: str) -> str:
        line = _line_of(text, *prefix, *keys)
        return f"{path}:{line}" if line else path

    if not isinstance(raw, dict):
        raise SpecError(f"{where()}: a spec must be a table")
    _refuse_unknown(raw, _SPEC_KEYS, lambda key: f"{where(key)}:")
    dims_raw = raw.get("dims", {})
    if not isinstance(dims_raw, dict):
        raise SpecError(f"{where('dims')}: dims must be a table of NAME = SIZE")
    dims: dict[str, int] = {}
    dim_where: dict[str, str] = {}
    for name, size in dims_raw.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise SpecError(
                f"{where('dims', name)}: dims.{name} must be a size (0 or more), got {size!r}"
            )
        dims[name], dim_where[name] = size, where("dims", name)
    inputs_raw = raw.get("inputs", {})
    if not isinstance(inputs_raw, dict):
        raise SpecError(f"{where('inputs')}: inputs must be a table of input tables")
    inputs = {
        name: _input_rule(name, rule, where("inputs", name)) for name, rule in inputs_raw.items()
    }
    seed = raw.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise SpecError(f"{where('seed')}: seed must be a whole number, 0 or more, got {seed!r}")
    label = f"{path}" + (f" [{'.'.join(prefix)}]" if prefix else "")
    return ModelSpec(dims, inputs, seed, (label,), dim_where)


def _read(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return loads_toml(text, path), text
    except TomlError as e:
        raise SpecError(str(e)) from None


def load_model_spec(path: Path) -> ModelSpec:
    """A ``<stem>.inputs.toml`` file: one spec at its top level."""
    raw, text = _read(path)
    return _spec(raw, str(path), text)


def _models_tables(path: Path) -> dict[str, ModelSpec]:
    raw, text = _read(path)
    unknown = sorted(set(raw) - {"models"})
    if unknown:
        line = _line_of(text, unknown[0])
        raise SpecError(
            f'{path}:{line or 1}: unknown key {unknown[0]!r}; a {path.name} holds [models."<name>"] tables'
        )
    models = raw.get("models", {})
    if not isinstance(models, dict):
        raise SpecError(f'{path}: models must be a table of [models."<name>"] tables')
    return {key: _spec(value, str(path), text, ("models", key)) for key, value in models.items()}


def load_folder_specs(folder: Path) -> dict[str, ModelSpec]:
    """``folder/models.toml`` by model path relative to folder; {} where there is none."""
    path = folder / FOLDER_SPECS
    return _models_tables(path) if path.is_file() else {}


def load_overlay(path: Path) -> dict[str, ModelSpec]:
    """A zoo manifest overlay: specs by zoo model name."""
    if not Path(path).is_file():
        raise SpecError(f"--input-specs {path}: file not found")
    return _models_tables(Path(path))


def beside_path(model_path: Path) -> Path:
    """``det.onnx`` -> ``det.inputs.toml`` in the same folder."""
    return model_path.with_name(model_path.name.removesuffix(".onnx") + ".inputs.toml")


def spec_for_file(model_path: Path, root: Path | None = None) -> ModelSpec:
    """The specs of a model file from its folders' ``models.toml`` (from ``root`` down to
    its own folder) and the file beside it, merged in that order."""
    spec = ModelSpec()
    model_path = Path(model_path)
    folders = [model_path.parent]
    if root is not None:
        root = Path(root)
        folders = [p for p in reversed(model_path.parents) if p == root or root in p.parents]
    for folder in folders:
        tables = load_folder_specs(folder)
        key = model_path.relative_to(folder).as_posix()
        if key in tables:
            spec = spec.merged(tables[key])
    beside = beside_path(model_path)
    if beside.is_file():
        spec = spec.merged(load_model_spec(beside))
    return spec


# -- the command line -------------------------------------------------------------------
def parse_dim(text: str) -> tuple[str, int]:
    """``NAME=SIZE`` (``--dim``)."""
    name, sep, size = text.partition("=")
    if not sep or not name.strip() or not size.strip().isdigit():
        raise SpecError(f"--dim {text!r}: expected NAME=SIZE, e.g. height=320")
    return name.strip(), int(size)


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``INPUT=1x3x224x224`` (``--input-shape``); ``INPUT=`` is a scalar."""
    name, sep, shape = text.rpartition("=")
    if not sep or not name.strip():
        raise SpecError(f"--input-shape {text!r}: expected INPUT=1x3x224x224")
    try:
        return name.strip(), parse_shape(shape, f"--input-shape {text!r}")
    except SpecError as e:
        raise SpecError(str(e)) from None


def from_command_line(
    dims: Iterable[tuple[str, int]] = (), shapes: Iterable[tuple[str, tuple[int, ...]]] = ()
) -> ModelSpec:
    sizes = dict(dims)
    inputs = {name: InputRule(shape=shape, where="--input-shape") for name, shape in shapes}
    if not sizes and not inputs:
        return ModelSpec()
    return ModelSpec(sizes, inputs, None, ("command line",), {name: "--dim" for name in sizes})


def load_toml_spec_text(text: str, where: str = "<string>") -> ModelSpec:
    """A spec from TOML text (tests, and specs embedded elsewhere)."""
    try:
        raw = loads_toml(text, where)
    except TomlError as e:
        raise SpecError(str(e)) from None
    return _spec(raw, where, text)
