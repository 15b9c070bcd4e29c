"""Model cases: the onnxruntime reference, numerics bisection, and chosen inputs.

``ChosenInputsCase`` is a zoo or ``--onnx-dir`` model. One that ships test data sets
runs them; one that ships no inputs gets them from its spec and the shape rule
(``onnx.model_inputs``), checked by onnxruntime before IREE is asked. By default the
model is compiled at the concrete shapes of its inputs (``onnx.static_shapes``); the
``:dynamic`` variant compiles the model as exported, with its symbolic dims.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iree_conformance.frontends.onnx.specs import ModelSpec
from iree_conformance.model.cases import (
    ONNX_KEEP_F64,
    Case,
    CaseInvalid,
    CaseReferenceError,
    CaseSkipped,
)
from iree_conformance.model.compare import Tolerance
from iree_conformance.model.jobs import BARE_CHECK_OPTION, LARGE_MODEL_OPTION, Program
from iree_conformance.model.preparation import OtherPreparation
from iree_conformance.model.quantization import QuantGrid
from iree_conformance.model.unjudged import InputsNotJudged

if TYPE_CHECKING:
    from iree_conformance.frontends.onnx.model_inputs import ChosenInputs
    from iree_conformance.suites.run_options import RunOptions

DYNAMIC_SUFFIX = ":dynamic"
# Whole models accumulate rounding differently from onnxruntime: looser than one op.
# The zoo's and --onnx-dir's models alike.
MODEL_TOLERANCE = Tolerance(rtol=1e-3, atol=1e-4)


def cli_spec(options: RunOptions | None) -> ModelSpec:
    """``--dim`` and ``--input-shape`` (core options: both model suites read them) as a
    spec (empty without them)."""
    from iree_conformance.frontends.onnx.specs import from_command_line

    if options is None:
        return from_command_line()
    return from_command_line(options.dims, options.input_shapes)


@dataclasses.dataclass
class ModelCase(Case):
    """Base for model cases: onnxruntime reference and numerics bisection."""

    def set_tolerances(self, count: int) -> list[Tolerance]:
        """The case's tolerance, with the quantization grid of each output that has one
        (``onnx.quant_grid``): those outputs are judged by the grid rule."""
        grids = self.quantization_grids()
        if not any(grids):
            return [self.tolerance] * count
        return [dataclasses.replace(self.tolerance, grids=grids)] * count

    def quantization_grids(self) -> tuple[QuantGrid | None, ...]:
        """Each output's grid (read once per case: a zoo model's graph can be large)."""
        from iree_conformance.frontends.onnx.quant_grid import output_grids

        if "_quant_grids" not in self.__dict__:
            try:
                model = self._graph()
                grids = output_grids(model) if model is not None else ()
            except Exception:  # noqa: BLE001 - a graph it cannot read gets the strict rule
                grids = ()
            self.__dict__["_quant_grids"] = grids
        return self.__dict__["_quant_grids"]

    def compile_flags(self, target_flags: tuple[str, ...]) -> list[str]:
        """IREE's default demotes float64 to float32, which also changes the module's
        signature: a model whose inputs or outputs are declared float64 would get f32
        buffers for its f64 values (OUT_OF_RANGE at run, a harness artifact). Such a model
        keeps float64 (as the onnx_ops suite does); every other model keeps the default
        (with f64 kept, two light models with f64 inside fail to compile)."""
        flags = super().compile_flags(target_flags)
        if self._declares_float64():
            flags.append(ONNX_KEEP_F64)
        return flags

    def outcome_info(self) -> dict[str, Any]:
        """``f64_kept``: float64 kept (``ONNX_KEEP_F64``), a step beyond the file as given."""
        info = super().outcome_info()
        return {**info, "f64_kept": True} if self._declares_float64() else info

    def users_program(self) -> bool:
        return True

    def program(self) -> Program:
        """A user's model: where its opset is upgraded, IREE's tools at their defaults are
        tried on it as given too (``BARE_CHECK_OPTION``)."""
        program = super().program()
        options = {**program.import_options, BARE_CHECK_OPTION: True}
        return dataclasses.replace(program, import_options=options)

    def _declares_float64(self) -> bool:
        if "_declares_f64" not in self.__dict__:
            import onnx

            try:
                graph = self._graph()
            except Exception:  # noqa: BLE001 - an unreadable model fails at prepare instead
                graph = None
            values = [*graph.graph.input, *graph.graph.output] if graph is not None else []
            self.__dict__["_declares_f64"] = any(
                v.type.tensor_type.elem_type == onnx.TensorProto.DOUBLE for v in values
            )
        return bool(self.__dict__["_declares_f64"])

    def _graph(self):
        """The model's graph (without external data: scales are small and inline)."""
        import onnx

        if self.source_path is not None:
            return load_model_header(self.source_path)
        if self.source_bytes is not None:
            return onnx.load_from_string(self.source_bytes)
        return None

    def compiled_model(self):
        """(the model as compiled: static input shapes set where the case sets them, its
        inputs): what ``--bisect-numerics`` and the reduction (engine/reduction.py) cut."""
        import onnx

        from iree_conformance.frontends.onnx.static_shapes import STATIC_OPTION, fix_input_shapes

        assert self.source_path is not None
        if self.import_options.get(LARGE_MODEL_OPTION):
            raise ValueError(
                f"{self.source_path}: a model over 2 GiB cannot be loaded in memory to be cut "
                "(protobuf's limit); cut it with its external data by hand"
            )
        model = onnx.load(str(self.source_path))
        inputs = self.input_sets()[-1]
        static = self.import_options.get(STATIC_OPTION)
        if static:  # the program that was compiled: the one at static shapes
            model = fix_input_shapes(model, static)
        return model, inputs

    def reduce_failure(self, fails, budget_s, progress, first_line: str):
        """The smallest subgraph of the compiled model that ``fails`` (engine/reduction.py
        gives the predicate; frontends/onnx/reduce.py cuts): a ``ReductionResult``."""
        from iree_conformance.frontends.onnx.reduce import reduce_onnx

        model, inputs = self.compiled_model()
        return reduce_onnx(model, inputs, fails, budget_s, progress, first_line)

    def isolate_numerics(self, run_candidate):
        """The first diverging node run alone (``run_candidate``: IREE), or None."""
        from iree_conformance.frontends.onnx.reduce import isolate_node

        model, inputs = self.compiled_model()
        return isolate_node(
            model, inputs, run_candidate, self.tolerance.rtol or 1e-3, self.tolerance.atol or 1e-4
        )

    def bisect(self, run_candidate) -> str:
        from iree_conformance.frontends.onnx.bisect import bisect

        model, inputs = self.compiled_model()
        from iree_conformance.frontends.onnx.quant_grid import tensor_grids

        report = bisect(
            model,
            inputs,
            run_candidate,
            rtol=self.tolerance.rtol or 1e-3,
            atol=self.tolerance.atol or 1e-4,
            grids=tensor_grids(model),
        )
        return report.summary()


def load_model_header(path: Path):
    """The model's graph without external data; a corrupt file is a clear error."""
    import onnx

    from iree_conformance.frontends.onnx.prepare import PrepareError

    try:
        empty = Path(path).stat().st_size == 0
    except OSError:
        empty = False  # onnx.load says what is wrong with it
    if empty:  # protobuf parses 0 bytes as an empty model: refuse it here, not at reference
        raise PrepareError(f"{path}: empty file (0 bytes), not an ONNX model; export it again")
    try:
        return onnx.load(str(path), load_external_data=False)
    except Exception as e:  # google.protobuf DecodeError and friends
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise PrepareError(
            f"{path}: not a valid ONNX protobuf (truncated or corrupt?): {first}"
        ) from None


def large_model_option(path: Path, model) -> list[list[Any]] | None:
    """For a model over protobuf's 2 GiB with its external data (checked by path first,
    nothing loaded: frontends/onnx/prepare.large_model_size), its ``LARGE_MODEL_OPTION``:
    its external data files' identity; None for any other. One whose external data is
    outside its folder, truncated or mis-declared, or that the checker rejects, is the
    case's error."""
    from iree_conformance.frontends.onnx.large_import import external_data_identity
    from iree_conformance.frontends.onnx.prepare import PrepareError, large_model_size

    try:
        if large_model_size(Path(path), model) is None:
            return None
        return external_data_identity(model, Path(path).parent)
    except (PrepareError, OSError) as e:
        raise CaseInvalid(str(e)) from None


def has_symbolic_inputs(model) -> bool:
    """Whether a graph input (initializers excluded) has a symbolic or unknown dim."""
    from iree_conformance.frontends.onnx.values import graph_inputs

    return any(
        not d.HasField("dim_value") or d.dim_value < 0
        for vi in graph_inputs(model)
        if vi.type.WhichOneof("value") == "tensor_type"
        for d in vi.type.tensor_type.shape.dim
    )


@dataclasses.dataclass(frozen=True)
class ShippedDataSets:
    """A model's ``test_data_set_N`` folders as one case runs them; ``info`` is the
    Outcome's ``info["inputs"]``: the folders, the shapes, how it was compiled."""

    dirs: tuple[Path, ...]
    inputs: list[list[np.ndarray]]
    outputs: list[list[np.ndarray]]
    info: dict[str, Any]


@dataclasses.dataclass
class ChosenInputsCase(ModelCase):
    """A model whose inputs are its test data sets (``use_data_sets``), or are chosen by
    its spec and the shape rule (``choose``).

    ``input_spec`` (from files: a name the model lacks is an error) and ``cli_spec``
    (``--dim``/``--input-shape``, given to every model: each takes what is about it)
    are merged, the command line winning. ``dynamic`` compiles the symbolic model.
    """

    input_spec: ModelSpec = dataclasses.field(default_factory=ModelSpec)
    cli_spec: ModelSpec = dataclasses.field(default_factory=ModelSpec)
    dynamic: bool = False
    io_ports: Mapping[str, Any] | None = None
    _chosen: ChosenInputs | None = dataclasses.field(default=None, repr=False)
    _data: ShippedDataSets | None = dataclasses.field(default=None, repr=False)

    def _note_large_model(self, model_path: Path, model) -> None:
        """A model over 2 GiB is imported with its weights in a parameter file (the
        frontend's large path); its option keys the store by its external data."""
        option = large_model_option(model_path, model)
        if option is not None:
            self.import_options[LARGE_MODEL_OPTION] = option

    def use_data_sets(self, model_path: Path, dirs: Sequence[Path]) -> list[list[np.ndarray]]:
        """Loads (once) and returns the inputs of the model's ``test_data_set_N`` folders.

        The static case of a model with symbolic dims is compiled at data set 0's
        shapes (``onnx.static_shapes``), and runs the sets of those shapes; a set of
        other shapes is left to the ``:dynamic`` case, which runs every set."""
        if self._data is None:
            from iree_conformance.frontends.onnx.static_shapes import STATIC_OPTION
            from iree_conformance.frontends.onnx.values import graph_inputs, load_data_set

            model = load_model_header(model_path)
            self._note_large_model(model_path, model)
            loaded = [(Path(d), *load_data_set(d)) for d in dirs]
            names = [vi.name for vi in graph_inputs(model)]
            shapes = [
                {n: list(np.shape(x)) for n, x in zip(names, inputs)} for _, inputs, _ in loaded
            ]
            info: dict[str, Any] = {
                "data_sets": [str(d) for d, _, _ in loaded],
                "compiled": "dynamic" if self.dynamic else "static",
                "shapes": shapes[0] if shapes else {},
            }
            if any(s != shapes[0] for s in shapes):
                info["set_shapes"] = shapes  # one per set; the static case keeps set 0's
            if not self.dynamic and loaded and has_symbolic_inputs(model):
                self.import_options[STATIC_OPTION] = shapes[0]
                info["rule"] = f"the shapes of {loaded[0][0].name}"
                other = [str(d) for (d, _, _), s in zip(loaded, shapes) if s != shapes[0]]
                if other:
                    info["other_shapes"] = other  # run by the :dynamic case
                    loaded = [x for x, s in zip(loaded, shapes) if s == shapes[0]]
                    info["data_sets"] = [str(d) for d, _, _ in loaded]
                    del info["set_shapes"]
            self._data = ShippedDataSets(
                tuple(d for d, _, _ in loaded),
                [inputs for _, inputs, _ in loaded],
                [outputs for _, _, outputs in loaded],
                info,
            )
        return self._data.inputs

    def shipped_expected(self) -> list[list[np.ndarray]]:
        """The outputs shipped in the data sets ``use_data_sets`` loaded."""
        assert self._data is not None
        for d, outputs in zip(self._data.dirs, self._data.outputs):
            if not outputs:
                raise ValueError(
                    f"{self.case_id}: data set {d} holds no output_*.pb files to check against"
                )
        return self._data.outputs

    def choose(self, model_path: Path) -> list[list[np.ndarray]]:
        """Chooses (once) and returns the one input set; raises what the pipeline reports."""
        if self._chosen is None:
            from iree_conformance.frontends.onnx.inputs import specs_from_io_ports, specs_from_model
            from iree_conformance.frontends.onnx.model_inputs import choose_inputs
            from iree_conformance.frontends.onnx.specs import SpecError
            from iree_conformance.frontends.onnx.static_shapes import STATIC_OPTION

            model = load_model_header(model_path)
            self._note_large_model(model_path, model)
            ports = (self.io_ports or {}).get("inputs")
            specs = specs_from_io_ports(ports) if ports else specs_from_model(model)
            names = [s.name for s in specs]
            dims = {d for s in specs for d in s.shape if isinstance(d, str) and d not in ("", "?")}
            try:
                spec = self.input_spec.check_against(names, dims, str(model_path))
                spec = spec.merged(self.cli_spec.check_against(names, dims, "", strict=False))
            except SpecError as e:
                raise CaseInvalid(str(e)) from None
            try:
                chosen = choose_inputs(model, specs, spec, source=model_path)
            except ValueError as e:  # a spec shape that does not fit the input, or too large
                raise CaseInvalid(str(e)) from None
            chosen.info["compiled"] = "dynamic" if self.dynamic else "static"
            self._chosen = chosen
            if not self.dynamic and chosen.symbolic:
                self.import_options[STATIC_OPTION] = {k: list(v) for k, v in chosen.shapes.items()}
        chosen = self._chosen
        if chosen.skip:
            raise CaseSkipped(chosen.skip)
        if chosen.problem:
            raise CaseReferenceError(chosen.problem)
        return [chosen.arrays]

    def other_preparation(self, stage: str) -> OtherPreparation | None:
        """For a failure at import or compile of a model with named symbolic dims: the same
        model with every named dim fixed at the chosen sizes wherever the graph names it
        (onnxruntime's ``make_dynamic_shape_fixed``), beside the case's own (the inputs'
        dims fixed, or the dims as exported): when it passes, the failure is said to be
        the symbolic dims'."""
        from iree_conformance.frontends.onnx.static_shapes import EVERY_DIM_OPTION, STATIC_OPTION

        dims = (self._chosen.info.get("dims") if self._chosen is not None else None) or {}
        named = {k: int(d["size"]) for k, d in dims.items() if not k.endswith("]")}
        if not named or self._chosen is None:
            return None
        program = super().program()
        options = {
            **program.import_options,
            STATIC_OPTION: {k: list(v) for k, v in self._chosen.shapes.items()},
            EVERY_DIM_OPTION: named,
        }
        used = "the dims as exported" if self.dynamic else "the inputs' dims fixed"
        other = "every named dim fixed (onnxruntime's make_dynamic_shape_fixed)"
        return OtherPreparation(used, other, dataclasses.replace(program, import_options=options))

    def outcome_info(self) -> dict[str, Any]:
        info = super().outcome_info()
        if self._data is not None:
            return {**info, "inputs": self._data.info}
        return {**info, "inputs": self._chosen.info} if self._chosen is not None else info

    def unjudged_reason(self) -> str | None:
        return self._chosen.unjudged if self._chosen is not None else None

    def chosen_expected(self) -> list[list[np.ndarray]]:
        assert self._chosen is not None and self._chosen.reference is not None
        if self._chosen.unjudged:
            raise InputsNotJudged(self._chosen.unjudged)  # the pipeline judges it first
        return [self._chosen.reference]
