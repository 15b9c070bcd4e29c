"""``repro CASE --reduce`` of programs that are MLIR when IREE fails them (issue 53): a
JAX Cholesky's LAPACK ``custom_call`` (a compile failure) and, where the openxla corpus
is here, a StableHLO file that crashes the compiler, each cut op by op to its failing
op, and the reduced folder verified with IREE's tools alone (``sh repro.sh`` too)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iree_conformance.common.diagnostics import normalize

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
CORPUS = REPO.parent / "shared" / "stablehlo-testdata"
needs_tools = pytest.mark.skipif(
    not (BIN / "iree-compile").exists(), reason="IREE's tools are not beside this Python"
)


def repro(tmp_path: Path, case_id: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "repro",
            case_id,
            "--reduce",
            "-o",
            str(tmp_path / "r"),
            "--targets",
            str(REPO / "conformance" / "targets.toml"),
            "--store-dir",
            str(tmp_path / "store"),
            *extra,
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )


def _sh(folder: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sh", str(folder / "repro.sh")], cwd=cwd, env={"PATH": f"{BIN}:/usr/bin:/bin"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@needs_tools
def test_a_jax_cholesky_is_cut_to_its_lapack_custom_call(tmp_path):
    pytest.importorskip("jax")
    proc = repro(tmp_path, "jax/linalg/cholesky")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    whole, reduced = tmp_path / "r", tmp_path / "r" / "reduced"
    record = json.loads((reduced / "reduction.json").read_text())
    assert record["kind"] == "mlir-ops" and record["ops_after"] == 1, record
    assert record["op_names"] == ["stablehlo.custom_call"] and record["ops_before"] > 20
    assert record["reproducer"]["reproduced"] is True, record
    for name in ("input.mlir", "compile.flags", "run.flags", "repro.sh", "repro.cmd"):
        assert (reduced / name).is_file(), name
    assert "Reduced from" in (reduced / "ISSUE.md").read_text()
    assert (reduced / "compile.flags").read_text() == (whole / "compile.flags").read_text()
    ran = _sh(reduced, tmp_path)  # by hand: IREE's tools alone, started from elsewhere
    first = next(line for line in ran.stderr.splitlines() if "error:" in line)
    want = json.loads((whole / "repro.json").read_text())["first_line"]
    assert ran.returncode == 1 and normalize(first) == normalize(want)


@needs_tools
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the openxla StableHLO corpus is not here")
def test_a_compiler_crash_of_the_openxla_corpus_is_cut_to_one_op(tmp_path):
    proc = repro(
        tmp_path, "stablehlo-ext/bitcast_convert_type_complex64_2_3", "--stablehlo-dir",
        str(CORPUS),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads((tmp_path / "r" / "reduced" / "reduction.json").read_text())
    assert record["op_names"] == ["stablehlo.bitcast_convert"], record
    assert record["reproducer"]["reproduced"] is True
    assert _sh(tmp_path / "r" / "reduced", tmp_path).returncode > 128  # killed by a signal
