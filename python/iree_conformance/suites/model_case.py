"""Model cases: the onnxruntime reference, numerics bisection, and chosen inputs.

``ChosenInputsCase`` is a model that ships no inputs (a zoo model without test data,
an ``--onnx-dir`` file): its inputs come from its spec and the shape rule
(``onnx.model_inputs``), checked by onnxruntime before IREE is asked. By default the
model is compiled at the chosen shapes (``onnx.static_shapes``); the ``:dynamic``
variant compiles the model as exported, with its symbolic dims.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iree_conformance.frontends.onnx.specs import ModelSpec
from iree_conformance.model.cases import Case, CaseInvalid, CaseReferenceError, CaseSkipped
from iree_conformance.model.unjudged import InputsNotJudged

if TYPE_CHECKING:
    from iree_conformance.frontends.onnx.model_inputs import ChosenInputs

DYNAMIC_SUFFIX = ":dynamic"


@dataclasses.dataclass
class ModelCase(Case):
    """Base for model cases: onnxruntime reference and numerics bisection."""

    def time_reference(self, inputs: list[np.ndarray], runs: int) -> float | None:
        import onnxruntime

        from iree_conformance.common.timing import median_time

        assert self.source_path is not None
        session = onnxruntime.InferenceSession(
            str(self.source_path), providers=["CPUExecutionProvider"]
        )
        feed = {i.name: x for i, x in zip(session.get_inputs(), inputs)}
        return median_time(lambda: session.run(None, feed), runs)

    def bisect(self, run_candidate) -> str:
        import onnx

        from iree_conformance.frontends.onnx.bisect import bisect
        from iree_conformance.frontends.onnx.static_shapes import STATIC_OPTION, fix_input_shapes

        assert self.source_path is not None
        model = onnx.load(str(self.source_path))
        inputs = self.input_sets()[-1]
        static = self.import_options.get(STATIC_OPTION)
        if static:  # bisect the program that was compiled: the one at static shapes
            model = fix_input_shapes(model, static)
        report = bisect(
            model,
            inputs,
            run_candidate,
            rtol=self.tolerance.rtol or 1e-3,
            atol=self.tolerance.atol or 1e-4,
        )
        return report.summary()


def load_model_header(path: Path):
    """The model's graph without external data; a corrupt file is a clear error."""
    import onnx

    from iree_conformance.frontends.onnx.prepare import PrepareError

    try:
        return onnx.load(str(path), load_external_data=False)
    except Exception as e:  # google.protobuf DecodeError and friends
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise PrepareError(
            f"{path}: not a valid ONNX protobuf (truncated or corrupt?): {first}"
        ) from None


@dataclasses.dataclass
class ChosenInputsCase(ModelCase):
    """A model whose inputs are chosen by its spec and the shape rule.

    ``input_spec`` (from files: a name the model lacks is an error) and ``cli_spec``
    (``--dim``/``--input-shape``, given to every model: each takes what is about it)
    are merged, the command line winning. ``dynamic`` compiles the symbolic model.
    """

    input_spec: ModelSpec = dataclasses.field(default_factory=ModelSpec)
    cli_spec: ModelSpec = dataclasses.field(default_factory=ModelSpec)
    dynamic: bool = False
    io_ports: Mapping[str, Any] | None = None
    _chosen: ChosenInputs | None = dataclasses.field(default=None, repr=False)

    def choose(self, model_path: Path) -> list[list[np.ndarray]]:
        """Chooses (once) and returns the one input set; raises what the pipeline reports."""
        if self._chosen is None:
            from iree_conformance.frontends.onnx.inputs import specs_from_io_ports, specs_from_model
            from iree_conformance.frontends.onnx.model_inputs import choose_inputs
            from iree_conformance.frontends.onnx.specs import SpecError
            from iree_conformance.frontends.onnx.static_shapes import STATIC_OPTION

            model = load_model_header(model_path)
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
            except ValueError as e:  # a spec shape that does not fit the input
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

    def outcome_info(self) -> dict[str, Any]:
        return {"inputs": self._chosen.info} if self._chosen is not None else {}

    def unjudged_reason(self) -> str | None:
        return self._chosen.unjudged if self._chosen is not None else None

    def chosen_expected(self) -> list[list[np.ndarray]]:
        assert self._chosen is not None and self._chosen.reference is not None
        if self._chosen.unjudged:
            raise InputsNotJudged(self._chosen.unjudged)  # the pipeline judges it first
        return [self._chosen.reference]
