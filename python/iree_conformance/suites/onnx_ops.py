"""The ONNX backend operator tests as cases: shipped data sets and expected outputs."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import ClassVar

import numpy as np

from iree_conformance.common.errors import CorpusError
from iree_conformance.common.userdirs import DATA_ENV, resolve_dir
from iree_conformance.model.cases import ONNX_KEEP_F64, Case, CaseSkipped
from iree_conformance.model.compare import Tolerance
from iree_conformance.suites.base import SuiteContext, SuiteOption
from iree_conformance.suites.run_options import positive_int

SUITE = "onnx_ops"
# onnx 1.23.2 yields 1,884 generated cases plus the wheel's data folders; 1.20.0, the
# lowest release pyproject.toml admits, 1,793. A broken materialization yields far fewer.
FLOOR = 1750


def data_dir(option: str | None) -> Path:
    """Where generated ONNX test data lives: option, $IREE_CONFORMANCE_DATA, user cache."""
    return resolve_dir(option, DATA_ENV, "data")


@dataclasses.dataclass
class OnnxNodeCase(Case):
    """One operator test; every test_data_set_N is one invocation."""

    batchable: ClassVar[bool] = True

    data_set_dirs: tuple[Path, ...] = ()
    _loaded: tuple[list, list] | None = dataclasses.field(default=None, repr=False)

    def _load(self) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
        if self._loaded is None:
            import onnx

            from iree_conformance.frontends.onnx.values import UnsupportedValue, load_data_set

            assert self.source_path is not None
            model = onnx.load(str(self.source_path), load_external_data=False)
            inputs, outputs = [], []
            for directory in self.data_set_dirs:
                try:
                    i, o = load_data_set(directory, model)
                except UnsupportedValue as e:
                    raise CaseSkipped(f"unsupported by the runtime path: {e}") from None
                inputs.append(i)
                outputs.append(o)
            self._loaded = (inputs, outputs)
        return self._loaded

    def input_sets(self) -> list[list[np.ndarray]]:
        return self._load()[0]

    def compile_flags(self, target_flags: tuple[str, ...]) -> list[str]:
        # float64 stays float64, as in IREE's own ONNX operator test CI: demoted, an f64
        # input no longer fits its buffer (OUT_OF_RANGE) or reads as zeros. Models keep
        # IREE's default (demotion): with f64 kept, two light models fail to compile.
        return [*super().compile_flags(target_flags), ONNX_KEEP_F64]

    def expected_sets(self, input_sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        return self._load()[1]


def sample(names: list[str], count: int) -> set[str]:
    """A fixed sample: the first count names ordered by sha256 of the name."""
    return set(sorted(names, key=lambda n: hashlib.sha256(n.encode()).hexdigest())[:count])


def collect(data_dir_option: str | None) -> list[Case]:
    """Every operator test (the full collection; ``OnnxOpsSuite.select`` samples it)."""
    from iree_conformance.frontends.onnx import node_tests

    root = node_tests.materialize(data_dir(data_dir_option))
    found = node_tests.load_cases(root)
    if len(found) < FLOOR:
        raise CorpusError(
            f"{root}: {len(found)} ONNX operator cases, fewer than the floor of {FLOOR}; delete the folder to regenerate it"
        )
    return [
        OnnxNodeCase(
            case_id=c.case_id,
            suite=SUITE,
            kind="onnx",
            source_path=c.model_path,
            tolerance=Tolerance(c.rtol, c.atol),
            skip_reason=c.unsupported_reason,
            reference_name="shipped",
            data_set_dirs=tuple(c.data_set_dirs),
        )
        for c in found
    ]


class OnnxOpsSuite:
    """The ONNX backend operator tests, against their shipped expected outputs."""

    name = SUITE
    description = "ONNX backend operator tests"
    case_prefix = "onnx-ops/"
    floor = FLOOR
    options = (
        SuiteOption(
            "--onnx-ops-sample",
            "run a fixed, deterministic sample of N ONNX operator tests (the PR smoke run) instead of all",
            {"metavar": "N", "type": positive_int},
        ),
        SuiteOption(
            "--onnx-data-dir",
            "where generated ONNX operator test data lives (default: $IREE_CONFORMANCE_DATA, else the user cache dir)",
            {"metavar": "DIR"},
        ),
    )

    def collect(self, context: SuiteContext) -> list[Case]:
        return collect(context.values["onnx_data_dir"])

    def select(self, cases: list[Case], context: SuiteContext) -> list[Case]:
        """--onnx-ops-sample N: the fixed sample of N (``sample``), else every case."""
        count = context.values["onnx_ops_sample"]
        if count is None:
            return cases
        keep = sample([c.case_id for c in cases], count)
        return [c for c in cases if c.case_id in keep]
