"""export-jax files give the jax suite's verdicts through --stablehlo-dir and in bundles,
with no JAX in the process that runs them."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from iree_conformance.bundles.bundle import run_bundle
from iree_conformance.cli import main as cli
from iree_conformance.common.store import ArtifactStore
from iree_conformance.engine.attempt import Attempt
from iree_conformance.engine.pipeline import run_case
from iree_conformance.model.outcome import Outcome
from iree_conformance.suites import jax as jax_suite
from tests.support.core_helpers import run_conformance_pytest

pytest.importorskip("jax", reason="exporting needs JAX: pip install -e '.[jax]'")

CASES = '''
import jax.numpy as jnp
import numpy as np
from iree_conformance.frontends.jax_export import case


@case(np.arange(6, dtype=np.float32).reshape(2, 3))
def softmax(x):
    return jnp.exp(x) / jnp.exp(x).sum(axis=1, keepdims=True)


@case(np.array([3, 1, 4_000_000_000], np.uint32), np.array([True, False, True]))
def unsigned_and_bool(u, b):
    return u * 3 + 1, ~b


@case(np.eye(3, dtype=np.float32) * 2 + 1)
def lapack_solve(a):
    """jnp.linalg.solve: a LAPACK custom call on the CPU, which IREE does not compile."""
    return jnp.linalg.solve(a, jnp.ones(3, jnp.float32))
'''


def _pytest(*args: str) -> subprocess.CompletedProcess:
    return run_conformance_pytest(*args, timeout=900)


def _observed(results, prefix: str) -> dict[str, str]:
    outcomes = json.loads(results.read_text())["outcomes"]
    return {
        o["case_id"].removeprefix(prefix).removesuffix(":check_xla"): Outcome.from_json(o).observed
        for o in outcomes
        if o["case_id"].startswith(prefix)
    }


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jax-export")
    (tmp / "src").mkdir()
    (tmp / "src" / "mine.py").write_text(CASES, encoding="utf-8")
    store = tmp / "store"
    code = cli.main(
        ["export-jax", str(tmp / "out"), "--jax-dir", str(tmp / "src"), "--store-dir", str(store)]
    )
    assert code == 0
    # A copy with one expected value changed: the file must be able to fail.
    text = (tmp / "out" / "mine" / "softmax.mlir").read_text()
    tampered = re.sub(
        r'(expect_almost_eq_const\(%result, dense<"0x)[0-9A-F]{8}', r"\g<1>0000803F", text
    )
    assert tampered != text
    (tmp / "tampered").mkdir()
    (tmp / "tampered" / "softmax.mlir").write_text(tampered)
    return tmp


def test_export_jax_writes_one_self_checking_file_per_case(exported):
    files = sorted(
        p.relative_to(exported / "out").as_posix() for p in (exported / "out").rglob("*.mlir")
    )
    assert files == ["mine/lapack_solve.mlir", "mine/softmax.mlir", "mine/unsigned_and_bool.mlir"]
    text = (exported / "out" / "mine" / "softmax.mlir").read_text()
    assert text.startswith(
        "// jax/ext/mine/softmax: exported by iree-conformance export-jax with jax "
    )
    assert "func.func public @main(" in text and "func.func @check_xla()" in text


def test_the_files_give_the_suites_verdicts_through_stablehlo_dir_and_bundles(
    exported, worker, llvm_cpu
):
    # The jax suite's verdicts (the same cached exports).
    jax_side = {}
    for record in jax_suite.user_listed(exported / "src", ArtifactStore(exported / "store")):
        outcome, _ = run_case(
            Attempt(jax_suite.to_case(record, exported / "store"), llvm_cpu), worker
        )
        jax_side[record.case_id.removeprefix("jax/ext/")] = outcome.observed
    assert jax_side == {
        "mine/softmax": "pass",
        "mine/unsigned_and_bool": "pass",
        "mine/lapack_solve": "fail-compile",
    }
    # The files, in a pytest run with no JAX import: --stablehlo-dir, then a bundle.
    common = [
        "--stablehlo-dir",
        str(exported / "out"),
        "--stablehlo-dir",
        str(exported / "tampered"),
    ]
    common += ["--store-dir", str(exported / "store2"), "-k", "stablehlo-ext"]
    normal = _pytest(*common, "--report-json", str(exported / "files.json"))
    assert normal.returncode == 1, (
        normal.stdout + normal.stderr
    )  # lapack_solve and the tampered copy
    files_side = _observed(exported / "files.json", "stablehlo-ext/")
    assert files_side.pop("softmax") == "fail-numerics"  # the tampered copy (its own folder)
    assert files_side == jax_side
    compiled = _pytest(*common, "--compile-only", "--bundle", str(exported / "bundle"))
    assert compiled.returncode == 1, compiled.stdout + compiled.stderr  # lapack_solve's compile
    run_bundle(exported / "bundle", "local-task", exported / "bundle.json")
    bundled = _observed(exported / "bundle.json", "stablehlo-ext/")
    assert bundled.pop("softmax") == "fail-numerics"
    assert bundled == {k: v for k, v in jax_side.items() if v == "pass"}
