"""``iree-conformance bench``: the seed's softmax on IREE, XLA and numpy, Benchee's table."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iree_conformance.cli import bench
from iree_conformance.cli.main import main


def test_iree_computes_the_seeds_softmax():
    call, info = bench.iree_softmax(4)
    out = call(bench.softmax_input(4))
    # the seed's NxIREE output for [1.0, 2.0, -1.0, -1.5]
    np.testing.assert_allclose(out, [0.25408426, 0.69067264, 0.03438657, 0.02085651], rtol=1e-5)
    assert info["module_bytes"] > 0 and info["compile_cpu_s"] > 0


def test_bench_prints_benchees_table_and_keeps_the_samples(tmp_path, capsys):
    path = tmp_path / "bench.json"
    assert (
        main(["bench", "--sizes", "4", "--time", "0.05", "--warmup", "0", "--json", str(path)]) == 0
    )
    out = capsys.readouterr().out
    assert "## softmax f32[4]" in out
    header = next(line for line in out.splitlines() if line.startswith("Name"))
    assert header.split() == ["Name", "ips", "average", "deviation", "median", "99th", "%"]
    assert {"numpy", "iree_llvm_cpu", "xla_jax_jit"} <= {
        line.split()[0] for line in out.splitlines() if line and line.split()[0] != "Name"
    }
    figures = json.loads(path.read_text())["sizes"][0]
    assert figures["n"] == 4 and "jax" not in (figures["reference_missing"] or "")
    rows = figures["rows"]
    assert len(rows["iree_llvm_cpu"]["samples_s"]) == len(rows["numpy"]["samples_s"]) >= 20


def test_without_jax_or_torch_their_rows_are_missing_and_said(monkeypatch, capsys):
    monkeypatch.setattr(bench, "xla_softmax", lambda: None)
    monkeypatch.setattr(bench, "torch_softmax", lambda: None)
    from iree_conformance.common.stats import Sampling

    figures = bench.bench_size(4, Sampling(warmup_s=0, min_runs=3, min_time_s=0))
    assert set(figures["rows"]) == {"numpy", "iree_llvm_cpu"}
    out = capsys.readouterr().out
    assert "jax is not installed" in out and "torch is not installed" in out
    assert "torch is not installed" in figures["reference_missing"]


def test_with_torch_the_table_has_torch_eagers_row(capsys):
    pytest.importorskip("torch", reason="the torch lane (.ci/torch_lane.sh) runs this")
    from iree_conformance.common.stats import Sampling

    figures = bench.bench_size(4, Sampling(warmup_s=0, min_runs=3, min_time_s=0))
    assert len(figures["rows"]["torch_eager"]["samples_s"]) >= 3
    assert any(line.startswith("torch_eager") for line in capsys.readouterr().out.splitlines())


@pytest.mark.parametrize("sizes", ["", "4,x", "0"])
def test_bad_sizes_are_exit_2(sizes, capsys):
    assert main(["bench", "--sizes", sizes]) == 2
    assert "--sizes" in capsys.readouterr().err
