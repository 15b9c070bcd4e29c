"""Constants, helpers and fixtures of the core tests (both levels; their conftest.py
imports the fixtures)."""

import subprocess
import sys
from pathlib import Path

import pytest

from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.model.targets import load_targets

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


@pytest.fixture
def run_conformance(pytester):
    """`pytest conformance/test_conformance.py -m <suite> ARGS` in a subprocess through pytester.

    Returns pytester's RunResult (``ret``, ``assert_outcomes``, ``stdout``/``stderr``).
    pytester runs it from an empty folder with HOME there; the test file is named by
    its absolute path, so the rootdir and ``conformance/conftest.py`` are the checkout's.
    """

    def run(*args: str, suite: str = "stablehlo", timeout: float = 600):
        return pytester.runpytest_subprocess(
            str(ROOT / "conformance" / "test_conformance.py"),
            "-m",
            suite,
            "-p",
            "no:cacheprovider",
            *args,
            timeout=timeout,
        )

    return run


def output(result) -> str:
    """A RunResult's stdout and stderr, for assertion messages and substring checks."""
    return result.stdout.str() + "\n" + result.stderr.str()


def run_conformance_pytest(
    *args: str, timeout: float = 600, suite: str = "stablehlo"
) -> subprocess.CompletedProcess:
    """``pytest conformance/test_conformance.py -m SUITE`` in a child process, from the
    repository root, with extra arguments (the bundle, JAX-export and timing tests)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "conformance/test_conformance.py",
            "-m",
            suite,
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
