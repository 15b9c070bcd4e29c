"""The frontend registry: every input format registers a Frontend, and the worker finds a
program's frontend there (frontends/registry.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from iree_conformance.engine.worker.errors import StageError
from iree_conformance.engine.worker.importer import prepare_and_import
from iree_conformance.frontends.base import Frontend, FrontendError, ImportContext
from iree_conformance.frontends.registry import FRONTENDS, frontend_for, importer_version
from iree_conformance.model.jobs import Program

FRONTENDS_DIR = Path(__file__).resolve().parents[3] / "python" / "iree_conformance" / "frontends"


def test_every_frontend_package_registers_one():
    packages = {p.name for p in FRONTENDS_DIR.iterdir() if (p / "__init__.py").exists()}
    # generation/ is no input format: its cases run themselves (Case.run_itself).
    assert packages - {"generation"} == set(FRONTENDS)
    assert set(FRONTENDS) == {"onnx", "stablehlo", "jax_export", "torch_export"}
    for name, frontend in FRONTENDS.items():
        assert isinstance(frontend, Frontend) and frontend.name == name


def test_the_torch_frontend_fails_the_stage_its_export_names():
    """iree-turbine's preparation ran in the pytest process; its failure reaches the
    worker as the program's import option and fails the import stage (IREE's tooling)."""
    from iree_conformance.frontends.base import ImportContext

    stages: list[str] = []
    context = ImportContext(stages.append, lambda: None, lambda: "")
    failed = {"failed": {"stage": "import", "message": "iree-turbine's preparation failed: X"}}
    program = Program("torch/x", "mlir", import_options=failed, frontend="torch_export")
    with pytest.raises(FrontendError, match="iree-turbine's preparation failed: X") as info:
        frontend_for(program).prepare_and_import(program, b"", context)
    assert info.value.stage == "import" and stages == ["prepare", "import"]
    fine = Program("torch/y", "mlir", frontend="torch_export")
    assert frontend_for(fine).prepare_and_import(fine, b"module {}", context) == (b"module {}", {})


def test_a_program_finds_its_frontend():
    assert frontend_for(Program("a", "onnx")).name == "onnx"
    assert frontend_for(Program("a", "mlir")).name == "stablehlo"  # the first of its kind
    assert frontend_for(Program("a", "mlir", frontend="jax_export")).name == "jax_export"
    with pytest.raises(FrontendError, match="unknown source kind 'tflite'"):
        frontend_for(Program("a", "tflite"))
    with pytest.raises(FrontendError, match="unknown frontend 'onnx' for a mlir program"):
        frontend_for(Program("a", "mlir", frontend="onnx"))


def test_the_import_key_reads_the_frontends_version():
    import importlib.metadata

    assert importer_version(Program("a", "onnx")) == importlib.metadata.version("onnx")
    assert importer_version(Program("a", "mlir")) == ""
    assert importer_version(Program("a", "tflite")) == ""  # it fails at import instead


def _import(program: Program, source: bytes) -> tuple[bytes, dict, list[str]]:
    stages: list[str] = []
    text, meta = prepare_and_import(program, source, stages.append, lambda: None, lambda: "")
    return text, meta, stages


def test_the_worker_imports_through_the_registry():
    text = b"func.func @main() { return }"
    assert _import(Program("a", "mlir"), text) == (text, {}, ["prepare", "import"])
    assert _import(Program("a", "mlir", frontend="jax_export"), text)[0] == text
    with pytest.raises(StageError, match="unknown source kind") as e:
        _import(Program("a", "tflite"), b"")
    assert e.value.stage == "prepare"
    with pytest.raises(StageError) as e:
        _import(Program("a", "onnx"), b"not a model")
    assert e.value.stage == "prepare" and "not a valid ONNX protobuf" in str(e.value)


def test_a_frontend_error_names_its_stage():
    class Broken:
        name, kind = "broken", "mlir"

        def importer_version(self) -> str:
            return ""

        def prepare_and_import(self, program, source, context: ImportContext):
            context.stage("import")
            raise FrontendError("import", "cannot read this")

        def timing_reference(self, reference, inputs):
            return None

    assert isinstance(Broken(), Frontend)
    stages: list[str] = []
    with pytest.raises(FrontendError) as e:
        Broken().prepare_and_import(
            Program("a", "mlir"), b"", ImportContext(stages.append, object, str)
        )
    assert (e.value.stage, str(e.value), stages) == ("import", "cannot read this", ["import"])
