"""Shared constants and fixtures of the core tests."""

from pathlib import Path

import pytest

from iree_conformance.targets import load_targets
from iree_conformance.worker import WorkerClient

ROOT = Path(__file__).resolve().parents[2]
TARGETS_TOML = ROOT / "conformance" / "targets.toml"
ADD_MLIR = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    """One worker (and store) per test module; a module may override it."""
    client = WorkerClient(tmp_path_factory.mktemp("store"))
    yield client
    client.close()


@pytest.fixture(scope="module")
def llvm_cpu():
    return load_targets(TARGETS_TOML)["llvm-cpu"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """An artifact store folder shared by one test module's pytest runs."""
    return tmp_path_factory.mktemp("store")
