"""``repro CASE --reduce`` of a torch module that IREE does not compile: ``torch.diff``
(as transformers' causal mask brings ``aten.diff`` into GPT-2 and Llama) among other ops,
cut at the MLIR level to the ``aten.diff`` and its constant operands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the torch suite's tests need torch")
pytest.importorskip("iree.turbine", reason="the torch suite's tests need iree-turbine")

from iree_conformance.cli.main import main  # noqa: E402

BIN = Path(sys.executable).parent
CASES = """
import torch
from iree_conformance.frontends.torch_export import case

torch.manual_seed(0)


@case(torch.randn(4, 6))
def diff_mask(x):
    y = torch.relu(x) * 2.0 + 1.0
    d = torch.diff(y, dim=-1)
    return torch.tanh(d).sum(dim=0) - y.mean()
"""


@pytest.mark.skipif(not (BIN / "iree-compile").exists(), reason="IREE's tools are not here")
def test_a_torch_diff_is_cut_to_its_op(tmp_path, capsys):
    cases = tmp_path / "mine"
    cases.mkdir()
    (cases / "ops.py").write_text(CASES, encoding="utf-8")
    status = main(
        [
            "repro",
            "torch/ext/ops/diff_mask",
            "--reduce",
            "--torch-dir",
            str(cases),
            "--store-dir",
            str(tmp_path / "store"),
            "--tools",
            str(BIN),
            "-o",
            str(tmp_path / "r"),
        ]  # fmt: skip
    )
    said = capsys.readouterr().out
    assert status == 0, said
    record = json.loads((tmp_path / "r" / "reduced" / "reduction.json").read_text())
    assert record["ops_before"] >= 20 and record["ops_after"] <= 5, record
    assert record["op_names"][-1] == "torch.operator" and record["reproducer"]["reproduced"]
    assert '"torch.aten.diff"' in (tmp_path / "r" / "reduced" / "input.mlir").read_text()
