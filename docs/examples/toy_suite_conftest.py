"""A conftest.py that adds the "toy" suite to `pytest conformance` (docs/adding-a-suite.md).

Put it in a conftest.py above the conformance folder (the checkout's root), or make it
a module of your own package and load it with `-p`, or register it as a pytest11 entry
point. Then: `pytest conformance -m toy --toy-count 3`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from iree_conformance.model.cases import Case
from iree_conformance.suites.base import SuiteContext, SuiteOption

ADD = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@dataclasses.dataclass
class AddCase(Case):
    """One StableHLO addition on seeded random inputs; numpy gives the expected sum."""

    seed: int = 0

    def input_sets(self) -> list[list[np.ndarray]]:
        rng = np.random.default_rng(self.seed)
        return [[rng.standard_normal(4).astype(np.float32) for _ in range(2)]]

    def expected_sets(self, input_sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        return [[a + b] for a, b in input_sets]


class ToySuite:
    name = "toy"  # the registry key, Case.suite and the marker: -m toy
    description = "toy additions (the example of docs/adding-a-suite.md)"
    case_prefix = "toy/"  # every case id starts with it
    floor = 1  # a collection of fewer cases is a broken corpus
    options = (
        SuiteOption(
            "--toy-count",
            "how many toy additions to run (default 2, or $TOY_COUNT)",
            {"type": int, "default": 2, "metavar": "N"},
            env="TOY_COUNT",
        ),
    )

    def collect(self, context: SuiteContext) -> list[Case]:
        count = context.values["toy_count"]  # the option's value, by argparse dest
        return [
            AddCase(
                case_id=f"toy/add_{i}",
                suite=self.name,
                kind="mlir",
                source_bytes=ADD.encode(),
                input_type="stablehlo",
                entry_function="main",
                seed=i,
            )
            for i in range(count)
        ]


def pytest_conformance_suites() -> list[ToySuite]:
    return [ToySuite()]
