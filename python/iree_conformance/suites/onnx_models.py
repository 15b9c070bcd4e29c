"""ONNX models: the light Model Zoo models shipped in the onnx wheel, and zoo models.

Light models are checked on their shipped inputs against the shipped expected output,
as onnx's backend test runner checks them: their weights are (almost) all zero, so any
other input gives the same output and a second run would check nothing new. Zoo models are
downloaded (verified by the manifest's sha256 and size) and checked on their own test
data sets against the outputs shipped with them when the manifest has a tarball, else
on seeded random inputs against onnxruntime.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iree_conformance.common.errors import CorpusError
from iree_conformance.common.userdirs import ZOO_CACHE_ENV, resolve_dir
from iree_conformance.model.cases import Case, CaseSkipped
from iree_conformance.model.compare import Tolerance
from iree_conformance.suites.base import SuiteContext, SuiteOption
from iree_conformance.suites.model_case import DYNAMIC_SUFFIX, ChosenInputsCase, ModelCase
from iree_conformance.suites.run_options import RunOptions, positive_int

if TYPE_CHECKING:
    from iree_conformance.frontends.onnx import light_models
    from iree_conformance.frontends.onnx.zoo import ZooStore
    from iree_conformance.frontends.onnx.zoo_manifest import ZooEntry

SUITE = "onnx_models"
LIGHT_FLOOR = 9
# Whole models accumulate rounding differently from onnxruntime: looser than one op.
MODEL_TOLERANCE = Tolerance(rtol=1e-3, atol=1e-4)


def zoo_cache_dir() -> Path:
    return resolve_dir(None, ZOO_CACHE_ENV, "zoo")


@dataclasses.dataclass
class LightModelCase(ModelCase):
    """A light model on the inputs its shipped output was computed from (one set);
    ``light`` is the wheel's record of it, which knows both."""

    light: light_models.LightModelCase | None = None
    _sets: list | None = dataclasses.field(default=None, repr=False)

    def input_sets(self) -> list[list[np.ndarray]]:
        assert self.light is not None
        if self._sets is None:
            self._sets = [self.light.inputs()]
        return self._sets

    def expected_sets(self, input_sets):
        """The shipped output of the shipped inputs."""
        assert self.light is not None
        return [self.light.expected_outputs()]


@dataclasses.dataclass
class ZooModelCase(ChosenInputsCase):
    """A Model Zoo model. ``zoo_entry`` is its manifest record; the function to run is
    ``Case.entry_function`` (None: the module's only function). It runs its test data
    sets, else chosen inputs (``ChosenInputsCase``), and is compiled at their shapes; a
    model whose manifest ports have symbolic dims has a ``:dynamic`` twin that compiles
    it as exported."""

    zoo_entry: ZooEntry | None = None
    zoo_store: ZooStore | None = None

    def input_sets(self) -> list[list[np.ndarray]]:
        from iree_conformance.frontends.onnx.download import DownloadSkipped

        assert self.zoo_entry is not None and self.zoo_store is not None
        try:
            data = self.zoo_store.fetch(self.zoo_entry)
        except DownloadSkipped as e:
            raise CaseSkipped(e.reason) from None
        self.source_path = data.model_path
        if data.data_set_dirs:
            return self.use_data_sets(data.model_path, data.data_set_dirs)
        self.io_ports = self.zoo_entry.io_ports
        return self.choose(data.model_path)

    def expected_sets(self, input_sets):
        """The outputs shipped in the model's test data sets, else onnxruntime's outputs on
        the chosen inputs."""
        if self._data is not None:
            return self.shipped_expected()
        return self.chosen_expected()


def light_cases() -> list[Case]:
    from iree_conformance.frontends.onnx.light_models import load_light_models

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
            tolerance=Tolerance(c.rtol, c.atol),
            reference_name="onnxruntime",  # what --timing-runs times against
            light=c,
        )
        for c in found
    ]


def zoo_model_cases(values: Mapping[str, Any], options: RunOptions | None = None) -> list[Case]:
    """The zoo models that the --zoo-* option values select (none without a manifest);
    options gives --offline and the core --dim/--input-shape."""
    from iree_conformance.frontends.onnx.download import Downloader
    from iree_conformance.frontends.onnx.specs import ModelSpec, load_overlay
    from iree_conformance.frontends.onnx.zoo import ZooStore, zoo_cases
    from iree_conformance.suites.onnx_dir import cli_spec

    if not values.get("zoo_manifest"):
        return []
    options = options or RunOptions()
    selected = zoo_cases(
        values["zoo_manifest"],
        names=values.get("zoo_models"),
        tags=values.get("zoo_tags"),
        max_bytes=values.get("zoo_max_bytes"),
    )
    store = ZooStore(
        zoo_cache_dir(),
        mirror=values.get("zoo_mirror"),
        downloader=Downloader(offline=options.offline),
    )
    specs_file = values.get("input_specs")
    overlay = load_overlay(specs_file) if specs_file else {}
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
        if _symbolic_ports(z.zoo_entry.io_ports):
            cases.append(ZooModelCase(case_id=z.case_id + DYNAMIC_SUFFIX, dynamic=True, **made))
    return cases


def _symbolic_ports(io_ports) -> bool:
    """Whether the manifest's inputs have a symbolic or unknown dim."""
    ports = (io_ports or {}).get("inputs", [])
    return any(not isinstance(d, int) or d < 0 for p in ports for d in p.get("shape", []))


class OnnxModelsSuite:
    """ONNX models: the light models shipped with onnx, and zoo models by manifest."""

    name = SUITE
    description = "ONNX Model Zoo models (light models offline, zoo by manifest)"
    case_prefix = ("onnx-models/", "onnx-zoo/")
    floor = LIGHT_FLOOR
    options = (
        SuiteOption(
            "--zoo-manifest",
            "ONNX Model Zoo manifest in the onnx.hub ONNX_HUB_MANIFEST.json format; a model with a model_with_data tarball is checked on its test_data_set_N against the shipped outputs, one without runs on seeded random inputs against onnxruntime",
            {"metavar": "PATH_OR_URL"},
        ),
        SuiteOption(
            "--zoo-models",
            "comma-separated zoo model names to select (file stems such as mnist-12)",
            {"metavar": "NAMES"},
        ),
        SuiteOption("--zoo-tags", "comma-separated zoo tags to select", {"metavar": "TAGS"}),
        SuiteOption(
            "--zoo-max-bytes",
            "select zoo models of at most N bytes",
            {"metavar": "N", "type": positive_int},
        ),
        SuiteOption(
            "--zoo-mirror",
            "URL or folder template for zoo downloads with {model_path}, {file_name} or {sha256} (default: $IREE_CONFORMANCE_ZOO_MIRROR, else the Hugging Face mirror); files are verified by sha256 and size and kept in $IREE_CONFORMANCE_ZOO_CACHE",
            {"metavar": "TEMPLATE"},
        ),
        SuiteOption(
            "--input-specs",
            'input specs for zoo models without test data: a TOML file of [models."<name>"] tables (see docs/your-own-model.md)',
            {"metavar": "PATH", "type": Path},
        ),
    )

    def collect(self, context: SuiteContext) -> list[Case]:
        return light_cases() + zoo_model_cases(context.values, context.options)
