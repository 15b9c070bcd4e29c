"""Cases from an ``--onnx-dir`` folder: every ``.onnx`` file under it is a model case.

A model ``DIR/a/b.onnx`` is the case ``onnx-dir/a/b.onnx``, compiled at the shapes its
inputs are given (static), and, where the model has symbolic dims, also the case
``onnx-dir/a/b.onnx:dynamic``, compiled as exported. Its inputs:

* ``test_data_set_N`` folders beside the model (as in the Model Zoo: ``input_K.pb`` and
  ``output_K.pb``) are its inputs and expected outputs; several models in one folder
  share them, so a folder of many models keeps each in its own folder;
* otherwise its spec (``models.toml`` in a folder from DIR down, ``<stem>.inputs.toml``
  beside it, ``--dim``/``--input-shape``) and the shape rule choose them, and
  onnxruntime is the reference (``onnx.model_inputs``).

External data files (``.onnx.data`` and the like) stay beside the model and are loaded
from there. Folders starting with ``.`` are not searched.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iree_conformance.common.errors import CorpusError
from iree_conformance.model.cases import Case, CaseInvalid
from iree_conformance.suites.base import SuiteContext, SuiteOption
from iree_conformance.suites.model_case import (
    DYNAMIC_SUFFIX,
    MODEL_TOLERANCE,
    ChosenInputsCase,
    cli_spec,
    has_symbolic_inputs,
    load_model_header,
)

if TYPE_CHECKING:
    from iree_conformance.suites.run_options import RunOptions

SUITE = "onnx_dir"
CASE_PREFIX = "onnx-dir/"


@dataclasses.dataclass
class OnnxDirCase(ChosenInputsCase):
    """One model file; its test data sets when it has them, else chosen inputs."""

    data_set_dirs: tuple[Path, ...] = ()
    problem: str | None = None  # a broken spec or file, found at collection
    problem_is_spec: bool = False

    def input_sets(self) -> list[list[np.ndarray]]:
        if self.problem:
            raise CaseInvalid(self.problem)
        assert self.source_path is not None
        if not self.data_set_dirs:
            return self.choose(self.source_path)
        return self.use_data_sets(self.source_path, self.data_set_dirs)

    def expected_sets(self, input_sets):
        if not self.data_set_dirs:
            return self.chosen_expected()
        return self.shipped_expected()


def _external_data(model, folder: Path) -> dict[str, int]:
    """The external data files the model names and their sizes (-1: missing), for the
    store key: the .onnx file alone does not hold the weights."""
    from onnx.external_data_helper import uses_external_data

    found: dict[str, int] = {}
    for t in model.graph.initializer:
        if uses_external_data(t):
            loc = next((e.value for e in t.external_data if e.key == "location"), "")
            path = folder / loc
            found[loc] = path.stat().st_size if path.is_file() else -1
    return found


def model_cases(path: Path, root: Path, options: RunOptions | None = None) -> list[Case]:
    """The static case and, for a symbolic model, the dynamic one, of one model file."""
    from iree_conformance.frontends.onnx import specs as specs_mod

    rel = path.relative_to(root).as_posix()
    case_id = f"{CASE_PREFIX}{rel}"
    base: dict[str, Any] = {
        "suite": SUITE,
        "kind": "onnx",
        "source_path": path,
        "tolerance": MODEL_TOLERANCE,
        "reference_name": "onnxruntime",
    }
    try:
        model = load_model_header(path)
    except Exception as e:  # noqa: BLE001 - a corrupt file is this case's error
        return [OnnxDirCase(case_id=case_id, problem=str(e), **base)]
    data_sets = tuple(sorted(p for p in path.parent.glob("test_data_set_*") if p.is_dir()))
    try:
        spec = specs_mod.spec_for_file(path, root)
    except specs_mod.SpecError as e:
        return [OnnxDirCase(case_id=case_id, problem=str(e), problem_is_spec=True, **base)]
    cli = cli_spec(options)
    external = _external_data(model, path.parent)
    missing = sorted(loc for loc, size in external.items() if size < 0)
    if missing:
        problem = (
            f"{path}: its tensors are stored in external data file {missing[0]!r}, which is "
            f"not in {path.parent}: put it beside the model"
        )
        return [OnnxDirCase(case_id=case_id, problem=problem, **base)]
    if external:
        base["import_options"] = {"external_data": external}
    made: dict[str, Any] = {
        "data_set_dirs": data_sets,
        "input_spec": spec,
        "cli_spec": cli,
    }
    cases: list[Case] = [OnnxDirCase(case_id=case_id, **base, **made)]
    if has_symbolic_inputs(model):
        dynamic = dict(base)
        dynamic["import_options"] = dict(base.get("import_options", {}))
        cases.append(OnnxDirCase(case_id=case_id + DYNAMIC_SUFFIX, dynamic=True, **dynamic, **made))
    return cases


def dir_cases(root: Path, options: RunOptions | None = None) -> list[Case]:
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"--onnx-dir {root}: not a directory")
    files = sorted(
        p
        for p in root.rglob("*.onnx")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if not files:
        raise CorpusError(f"--onnx-dir {root}: holds no .onnx file; point it at a folder of models")
    cases: list[Case] = []
    for path in files:
        cases += model_cases(path, root, options)
    return cases


class OnnxDirSuite:
    """ONNX models from --onnx-dir folders: every .onnx file, static and (if symbolic) :dynamic."""

    name = SUITE
    description = "ONNX models from --onnx-dir folders (static and :dynamic cases)"
    case_prefix = CASE_PREFIX
    floor = 0  # no folder, no cases; a folder without a model is a CorpusError in dir_cases
    options = (
        SuiteOption(
            "--onnx-dir",
            "also run every .onnx file under DIR as a model case onnx-dir/<path> (repeatable): compiled at the shapes its inputs get (its test_data_set_N, its spec, else the shape rule), and as exported as onnx-dir/<path>:dynamic",
            {"action": "append", "default": [], "metavar": "DIR", "type": Path},
        ),
    )

    def collect(self, context: SuiteContext) -> list[Case]:
        """Every --onnx-dir folder's cases (none without the option)."""
        cases: list[Case] = []
        for root in context.values.get("onnx_dir") or ():
            cases += distinct_ids(dir_cases(Path(root), context.options), cases, Path(root))
        return cases


def distinct_ids(found: list[Case], earlier: list[Case], root: Path) -> list[Case]:
    """``found`` (one --onnx-dir root's cases) with ids that no earlier root's case has:
    two roots holding ``good.onnx`` are two cases, and two outcomes in the results. When
    a root repeats an earlier id, all its cases get the root's folder name after the
    prefix (``onnx-dir/B/good.onnx``; ``B-2``, ... while that is taken too), so each
    root keeps one naming; a root without a clash keeps the plain ids."""
    taken = {c.case_id for c in earlier}
    if not any(c.case_id in taken for c in found):
        return found
    name = root.resolve().name or "root"
    label, n = name, 1

    def relabel(case: Case) -> str:
        return f"{CASE_PREFIX}{label}/{case.case_id.removeprefix(CASE_PREFIX)}"

    while any(relabel(c) in taken for c in found):
        n += 1
        label = f"{name}-{n}"
    return [dataclasses.replace(c, case_id=relabel(c)) for c in found]
