"""The one case-folder module behind the jax and torch suites (issue 54): a kind's keys,
and the bridge that keeps a store warmed by older code that exports alike."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from iree_conformance.common.store import ArtifactStore
from iree_conformance.frontends import case_folder
from iree_conformance.frontends.jax_export.folder import KIND as JAX
from iree_conformance.frontends.torch_export.folder import KIND as TORCH

CASES = """
from iree_conformance.frontends.torch_export import case

@case()
def one():
    return None
"""


def test_a_source_that_exports_alike_keeps_the_older_digest_and_keys(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("X = 1\n", encoding="utf-8")
    now = case_folder._digest(JAX.package)
    monkeypatch.setattr(case_folder, "SAME_AS", {})
    assert case_folder.source_digest(JAX) == now
    fresh = case_folder.file_key(JAX, tmp_path / "a.py", tmp_path, "jax/")
    monkeypatch.setattr(case_folder, "SAME_AS", {"jax": {now: "older"}})
    assert case_folder.source_digest(JAX) == "older"
    assert case_folder.source_digest(TORCH) == case_folder._digest(TORCH.package)
    bridged = case_folder.file_key(JAX, tmp_path / "a.py", tmp_path, "jax/")
    assert bridged != fresh
    # A source that changed since is keyed by its own digest again.
    monkeypatch.setattr(case_folder, "SAME_AS", {"jax": {"another source": "older"}})
    assert case_folder.file_key(JAX, tmp_path / "a.py", tmp_path, "jax/") == fresh


def test_each_kind_keeps_its_own_store_kinds_and_key(tmp_path):
    assert (JAX.index_kind, JAX.export_kind) == ("jax-cases", "jax-export")
    assert (TORCH.index_kind, TORCH.export_kind) == ("torch-cases", "torch-export")
    (tmp_path / "a.py").write_text("X = 1\n", encoding="utf-8")
    keys = {
        k.name: case_folder.file_key(k, tmp_path / "a.py", tmp_path, "p/") for k in (JAX, TORCH)
    }
    assert keys["jax"] != keys["torch"]


def test_a_file_that_defines_no_case_says_how_for_its_kind(tmp_path):
    (tmp_path / "empty.py").write_text("X = 1\n", encoding="utf-8")
    store = ArtifactStore(tmp_path / "store")
    [jax] = case_folder.list_tree(JAX, tmp_path, "jax/", store)
    [torch] = case_folder.list_tree(TORCH, tmp_path, "torch/", store)
    assert jax.error is not None and "list JaxCase values in CASES" in jax.error
    assert jax.file == "empty.mlir" and torch.file == ""
    assert torch.error is not None and "module_case(...)" in torch.error


def test_an_export_is_made_once_and_read_back(tmp_path):
    (tmp_path / "cases.py").write_text(CASES, encoding="utf-8")
    made: list[str] = []

    def export(path: Path, case, listed) -> bytes:
        made.append(listed.case_id)
        return b"payload"

    # in the pytest process: a local function cannot be sent to the export child
    kind = dataclasses.replace(TORCH, export=export, versions=dict, in_child=False)
    store = ArtifactStore(tmp_path / "store")
    [listed] = case_folder.list_tree(kind, tmp_path, "torch/", store)
    assert listed.case_id == "torch/cases/one" and listed.line == 4
    assert case_folder.export_listed(kind, listed, store) == b"payload"
    assert case_folder.export_listed(kind, listed, store) == b"payload"
    assert made == ["torch/cases/one"]
    assert not list((tmp_path / "store").rglob("*.lock"))
