"""Torch cases get what every other case gets: a reproducer folder that IREE's tools alone
show the failure with (none, saying why, for a failure in iree-turbine's Python
importer), a bundle that re-runs them (bf16 included), and beside a failure at import or
compile the same program prepared with torch's core decompositions, imported and
compiled: information in the Outcome, never its verdict."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the torch suite's tests need torch: pip install torch==2.13.0")
pytest.importorskip("iree.turbine", reason="the torch suite's tests need iree-turbine")

from iree_conformance.bundles.bundle import run_bundle  # noqa: E402
from iree_conformance.cli.main import main  # noqa: E402
from iree_conformance.common.store import ArtifactStore  # noqa: E402
from iree_conformance.engine.attempt import Attempt  # noqa: E402
from iree_conformance.engine.pipeline import run_case  # noqa: E402
from iree_conformance.suites import torch as torch_suite  # noqa: E402
from tests.support.core_helpers import run_conformance_pytest  # noqa: E402

BIN = Path(sys.executable).parent
needs_tools = pytest.mark.skipif(
    not (BIN / "iree-compile").exists(), reason="IREE's tools are not beside this Python"
)
CASES = '''
import torch
from iree_conformance.frontends.torch_export import case

torch.manual_seed(0)


@case(torch.randn(5, 3), torch.tensor([0, 2, 4]), torch.randn(3, 3))
def index_add(x, index, source):
    """iree-turbine's decompositions keep aten.index_add, which IREE does not lower."""
    return x.index_add(0, index, source)


@case(torch.randn(2, 3).to(torch.bfloat16))
def double_bf16(x):
    return x * 2


@case(torch.randn(3))
def cond(x):
    """The FX importer does not import torch.cond, with either table."""
    return torch.cond(x.sum() > 0, lambda y: y * 2, lambda y: y - 1, (x,))
'''


@pytest.fixture(scope="module")
def cases_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("torch-cases") / "mine"
    folder.mkdir()
    (folder / "ops.py").write_text(CASES, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def torch_store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("torch-store")


def _repro(case_id: str, cases_dir: Path, store: Path, out: Path, capsys) -> tuple[int, str]:
    status = main(
        [
            "repro",
            case_id,
            "--torch-dir",
            str(cases_dir),
            "--store-dir",
            str(store),
            "--tools",
            str(BIN),
            "-o",
            str(out),
        ]
    )
    said = capsys.readouterr()
    return status, said.out + said.err


@needs_tools
def test_a_torch_compile_failure_reproduces_with_iree_tools_alone(
    cases_dir, torch_store, tmp_path, capsys
):
    out = tmp_path / "index_add"
    status, said = _repro("torch/ext/ops/index_add", cases_dir, torch_store, out, capsys)
    assert status == 0, said
    record = json.loads((out / "repro.json").read_text())
    assert record["reproduced"] is True and record["kind"] == "fail-compile", record
    assert "torch.aten.index_add" in (out / "input.mlir").read_text()
    assert "--iree-input-type=torch" in (out / "compile.flags").read_text()
    issue = (out / "ISSUE.md").read_text()
    assert "iree-turbine's FX importer wrote" in issue
    assert "torch's core decompositions" in issue  # the preparation comparison's note
    # each step beyond the program as given, as for an ONNX model (issue 55 item 1)
    assert (
        "Beyond the file as given, the harness: exported by torch.export.export, non-strict "
        "(torch's default); iree-turbine's AOT decompositions and FX importer" in issue
    ), issue


@needs_tools
def test_a_torch_import_failure_writes_no_folder_and_says_why(
    cases_dir, torch_store, tmp_path, capsys
):
    out = tmp_path / "cond"
    status, said = _repro("torch/ext/ops/cond", cases_dir, torch_store, out, capsys)
    assert status == 9 and not out.exists(), said
    assert "no reproducer written: it fails in iree-turbine's preparation" in said


def test_a_compile_failure_says_what_torchs_core_decompositions_do(
    cases_dir, torch_store, worker, llvm_cpu
):
    listed = torch_suite.user_listed(cases_dir, ArtifactStore(torch_store))
    cases = {c.case_id: c for c in (torch_suite.to_case(r, torch_store) for r in listed)}
    outcome, _ = run_case(Attempt(cases["torch/ext/ops/index_add"], llvm_cpu), worker)
    assert (outcome.status, outcome.stage) == ("error", "compile")  # the verdict stands
    assert outcome.info["preparation"][0].startswith("exported by torch.export.export")
    said = outcome.info["preparations"]
    assert said["used"] == "iree-turbine's decompositions"
    assert said["summary"] == (
        "fails at compile with iree-turbine's decompositions; passes import+compile with "
        "torch's core decompositions"
    ), said
    assert outcome.diagnostics[-1] == said["summary"]
    assert list(Path(torch_store).glob("torch-core-export/*/*"))  # cached in the store
    cond, _ = run_case(Attempt(cases["torch/ext/ops/cond"], llvm_cpu), worker)
    assert (cond.status, cond.stage) == ("error", "import")
    assert cond.info["preparations"]["summary"] == (
        "fails at import with iree-turbine's decompositions; fails with torch's core "
        "decompositions too, at import: iree-turbine's FX importer fails on its program: "
        "NotImplementedError: Higher-order operation 'cond' not implemented in the FxImporter "
        "(tried '_import_hop_cond')"
    ), cond.info["preparations"]


@needs_tools
def test_a_torch_bundle_reruns_its_cases_bf16_included(cases_dir, tmp_path):
    common = [
        "--torch-dir",
        str(cases_dir),
        "-k",
        "double_bf16 or index_add",
        "--store-dir",
        str(tmp_path / "store"),
        "-n",
        "0",
    ]
    normal = run_conformance_pytest(
        *common, "--report-json", str(tmp_path / "normal.json"), suite="torch"
    )
    assert (tmp_path / "normal.json").exists(), normal.stdout[-3000:]
    compiled = run_conformance_pytest(
        *common, "--compile-only", "--bundle", str(tmp_path / "b"), suite="torch"
    )
    assert compiled.returncode in (0, 1), compiled.stdout[-3000:]
    counts = run_bundle(tmp_path / "b", "local-task", tmp_path / "bundle.json")
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    (bundled,) = manifest["cases"]
    assert bundled["case_id"] == "torch/ext/ops/double_bf16" and bundled["bf16"]
    outcomes = json.loads((tmp_path / "bundle.json").read_text())["outcomes"]
    normal_outcomes = {
        o["case_id"]: o for o in json.loads((tmp_path / "normal.json").read_text())["outcomes"]
    }
    assert [(o["case_id"], o["status"]) for o in outcomes] == [
        ("torch/ext/ops/double_bf16", "pass")
    ]
    assert normal_outcomes["torch/ext/ops/double_bf16"]["status"] == "pass"
    assert counts == {"pass": 1}
    assert any("torch/ext/ops/index_add" in line for line in manifest["not_bundled"])


@needs_tools
def test_check_model_of_a_pt2_writes_its_reproducer_and_the_comparison(
    tmp_path, capsys, monkeypatch
):
    import os

    import torch

    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")  # its tools

    class IndexAdd(torch.nn.Module):
        def forward(self, x, index, source):
            return x.index_add(0, index, source)

    args = (torch.randn(5, 3), torch.tensor([0, 2, 4]), torch.randn(3, 3))
    pt2 = tmp_path / "index_add.pt2"
    torch.export.save(torch.export.export(IndexAdd(), args), str(pt2))
    out = tmp_path / "outcome.json"
    status = main(
        [
            "check-model",
            str(pt2),
            "--store-dir",
            str(tmp_path / "store"),
            "--no-benchmark",
            "--repro-dir",
            str(tmp_path / "rd"),
            "--json",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert status == 1, said
    outcome = json.loads(out.read_text())
    assert outcome["info"]["preparations"]["other_status"] == "pass", outcome["info"]
    (record,) = (tmp_path / "rd").rglob("repro.json")
    assert json.loads(record.read_text())["reproduced"] is True, said
