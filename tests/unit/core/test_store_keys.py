"""The import key holds the IREE build, not only its version (issue 55 item 6): a wheel
rebuilt with the same version answered from the old build's modules."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

from iree_conformance.engine.worker import build_identity, compiler
from iree_conformance.engine.worker.store import ModuleCache
from iree_conformance.model.jobs import Program


def _fake_iree(root: Path, revision: str, library: bytes) -> None:
    text = f'VERSION = "3.13.0"\nREVISIONS = {{"IREE": "{revision}"}}\n'
    for relative in ("compiler/version.py", "_runtime_libs/version.py"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    (root / "compiler/_mlir_libs").mkdir(exist_ok=True)
    (root / "compiler/_mlir_libs/libIREECompiler.so").write_bytes(library)


@pytest.fixture
def iree_at(tmp_path, monkeypatch):
    """Makes ``iree`` resolve to a fake package under tmp_path/iree."""
    root = tmp_path / "iree"
    spec = importlib.machinery.ModuleSpec("iree", None, is_package=True)
    spec.submodule_search_locations = [str(root)]
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: spec if name == "iree" else real(name, *a)
    )

    def build(revision: str, library: bytes) -> str:
        _fake_iree(root, revision, library)
        compiler.compiler_version.cache_clear()
        cached = getattr(build_identity, "build_identity", None)
        if cached is not None:
            cached.cache_clear()
        return ModuleCache.keys(Program("a", "mlir"), b"module", (), "x86_64")[0]

    return build


def test_the_import_key_holds_the_compilers_revision_and_library(iree_at):
    first = iree_at("aaaa", b"\0" * 64)
    assert iree_at("aaaa", b"\0" * 64) == first  # the same build: the same key
    assert iree_at("bbbb", b"\0" * 64) != first  # a re-spun nightly: another revision
    assert iree_at("aaaa", b"\1" * 64) != first  # an engineer's own build, same revision
