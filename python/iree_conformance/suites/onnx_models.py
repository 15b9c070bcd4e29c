"""ONNX models: the light Model Zoo models shipped in the onnx wheel, and zoo models.

Light models are checked twice in one case: their shipped inputs against the shipped
expected output, and seeded random inputs against onnxruntime. Zoo models are
downloaded (verified by the manifest's sha256 and size) and checked on their own test
data sets against the outputs shipped with them when the manifest has a tarball, else
on seeded random inputs against onnxruntime.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import platformdirs

from ..cases import Case, CaseSkipped
from ..compare import Tolerance
from ..errors import CorpusError
from .model_case import DYNAMIC_SUFFIX, ChosenInputsCase, ModelCase

if TYPE_CHECKING:
    from ..onnx.zoo import ZooStore
    from ..onnx.zoo_manifest import ZooEntry
    from ..run_options import RunOptions

SUITE = "onnx_models"
LIGHT_FLOOR = 9
ZOO_CACHE_ENV = "IREE_CONFORMANCE_ZOO_CACHE"
# Whole models accumulate rounding differently from onnxruntime: looser than one op.
MODEL_TOLERANCE = Tolerance(rtol=1e-3, atol=1e-4)
SEED = 0


def zoo_cache_dir() -> Path:
    env = os.environ.get(ZOO_CACHE_ENV)
    return Path(env) if env else Path(platformdirs.user_cache_dir("iree-conformance")) / "zoo"


def _onnxruntime(model_path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    from ..onnx.reference import run_onnxruntime

    return run_onnxruntime(model_path, inputs)


def _random_inputs(model_path: Path, io_ports=None) -> list[np.ndarray]:
    import onnx

    from ..onnx.inputs import random_inputs, specs_from_io_ports, specs_from_model

    if io_ports and io_ports.get("inputs"):
        specs = specs_from_io_ports(io_ports["inputs"])
    else:
        specs = specs_from_model(onnx.load(str(model_path), load_external_data=False))
    return random_inputs(specs, seed=SEED)


@dataclasses.dataclass
class LightModelCase(ModelCase):
    expected_paths: tuple[Path, ...] = ()
    shipped_tolerance: Tolerance = Tolerance()
    _sets: list | None = dataclasses.field(default=None, repr=False)

    def input_sets(self) -> list[list[np.ndarray]]:
        if self._sets is None:
            import onnx

            from ..onnx.light_models import _dummy_input
            from ..onnx.values import graph_inputs

            assert self.source_path is not None
            model = onnx.load(str(self.source_path), load_external_data=False)
            shipped = [_dummy_input(vi, self.source_path) for vi in graph_inputs(model)]
            self._sets = [shipped, _random_inputs(self.source_path)]
        return self._sets

    def expected_sets(self, input_sets):
        """Set 0: the shipped output of the shipped inputs; set 1: onnxruntime on random inputs."""
        from onnx import load_tensor, numpy_helper

        shipped = [numpy_helper.to_array(load_tensor(str(p))) for p in self.expected_paths]
        return [shipped, _onnxruntime(self.source_path, input_sets[1])]

    def set_tolerances(self, count: int) -> list[Tolerance]:
        return [self.shipped_tolerance, self.tolerance][:count]


@dataclasses.dataclass
class ZooModelCase(ChosenInputsCase):
    """A Model Zoo model. ``zoo_entry`` is its manifest record; the function to run is
    ``Case.entry_function`` (None: the module's only function). Without test data sets
    its inputs are chosen (``ChosenInputsCase``) and it is compiled at their shapes; its
    ``:dynamic`` twin compiles it as exported."""

    zoo_entry: ZooEntry | None = None
    zoo_store: ZooStore | None = None
    _sets: list | None = dataclasses.field(default=None, repr=False)
    _shipped: list | None = dataclasses.field(default=None, repr=False)
    _data_dirs: tuple[Path, ...] = dataclasses.field(default=(), repr=False)

    def input_sets(self) -> list[list[np.ndarray]]:
        if self._sets is None:
            from ..onnx.download import DownloadSkipped
            from ..onnx.values import load_data_set

            assert self.zoo_entry is not None and self.zoo_store is not None
            try:
                data = self.zoo_store.fetch(self.zoo_entry)
            except DownloadSkipped as e:
                raise CaseSkipped(e.reason) from None
            self.source_path = data.model_path
            if data.data_set_dirs:
                loaded = [load_data_set(d) for d in data.data_set_dirs]
                self._sets = [inputs for inputs, _ in loaded]
                self._shipped = [outputs for _, outputs in loaded]
                self._data_dirs = tuple(data.data_set_dirs)
            else:
                self.io_ports = self.zoo_entry.io_ports
                self._sets = self.choose(data.model_path)
        return self._sets

    def expected_sets(self, input_sets):
        """The outputs shipped in the model's test data sets, else onnxruntime's outputs on
        the seeded random inputs."""
        if self._shipped is not None and all(self._shipped):
            return self._shipped
        if self._shipped is not None:
            empty = [str(d) for d, outputs in zip(self._data_dirs, self._shipped) if not outputs]
            raise ValueError(
                f"{self.case_id}: data set {empty[0]} holds no output_*.pb files to check against"
            )
        return self.chosen_expected()


def light_cases() -> list[Case]:
    from ..onnx.light_models import load_light_models

    found = load_light_models()
    if len(found) < LIGHT_FLOOR:
        raise CorpusError(
            f"{len(found)} light models in the onnx wheel, fewer than the floor of {LIGHT_FLOOR}; "
            "reinstall onnx (python -m pip install --force-reinstall onnx) or check that its backend/test/data folder is complete"
        )
    return [
        LightModelCase(
            case_id=c.case_id,
            suite=SUITE,
            kind="onnx",
            source_path=c.model_path,
            tolerance=MODEL_TOLERANCE,
            reference_name="onnxruntime",
            expected_paths=tuple(c.output_paths),
            shipped_tolerance=Tolerance(c.rtol, c.atol),
        )
        for c in found
    ]


def zoo_model_cases(options: RunOptions) -> list[Case]:
    from ..onnx.download import Downloader
    from ..onnx.specs import ModelSpec, load_overlay
    from ..onnx.zoo import ZooStore, zoo_cases
    from .onnx_dir import cli_spec

    if not options.zoo_manifest:
        return []
    selected = zoo_cases(
        options.zoo_manifest,
        names=options.zoo_models,
        tags=options.zoo_tags,
        max_bytes=options.zoo_max_bytes,
    )
    store = ZooStore(
        zoo_cache_dir(), mirror=options.zoo_mirror, downloader=Downloader(offline=options.offline)
    )
    overlay = load_overlay(options.input_specs) if options.input_specs else {}
    cli = cli_spec(options)
    cases: list[Case] = []
    for z in selected:
        made = dict(
            suite=SUITE,
            kind="onnx",
            tolerance=MODEL_TOLERANCE,
            skip_reason=z.unsupported_reason,
            reference_name="onnxruntime",
            zoo_entry=z.zoo_entry,
            zoo_store=store,
            input_spec=overlay.get(z.name, ModelSpec()),
            cli_spec=cli,
        )
        cases.append(ZooModelCase(case_id=z.case_id, **made))
        if not z.zoo_entry.data_path and _symbolic_ports(z.zoo_entry.io_ports):
            cases.append(ZooModelCase(case_id=z.case_id + DYNAMIC_SUFFIX, dynamic=True, **made))
    return cases


def _symbolic_ports(io_ports) -> bool:
    """Whether the manifest's inputs have a symbolic or unknown dim."""
    ports = (io_ports or {}).get("inputs", [])
    return any(not isinstance(d, int) or d < 0 for p in ports for d in p.get("shape", []))


def collect(options: RunOptions) -> list[Case]:
    return light_cases() + zoo_model_cases(options)
