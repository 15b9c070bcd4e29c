"""The scoreboard's test_backend.py hands IREE's backend module to onnx's BackendTest: a
node test runs through IREE (the scoreboard's files: tests/unit/onnx_backend)."""

from __future__ import annotations

import importlib
import unittest


def test_the_scoreboard_imports_the_backend_as_a_module():
    """Its test_backend.py imports ONNX_BACKEND by module path and hands the module to
    BackendTest: the module-level functions must be the backend."""
    import onnx.backend.test

    module = importlib.import_module("iree_conformance.onnx_backend.backend")
    assert hasattr(module, "run_model") and hasattr(module, "run")
    runner = onnx.backend.test.BackendTest(module, __name__)
    runner.include(r"^test_(abs|identity_sequence)_cpu$")
    node = runner.test_cases["OnnxBackendNodeModelTest"]
    result = unittest.TestResult()
    unittest.TestSuite(
        [node("test_abs_cpu"), node("test_identity_sequence_cpu")]  # type: ignore[arg-type]
    ).run(result)
    assert not result.failures and not result.errors, result.failures + result.errors
    assert [t.id().rsplit(".", 1)[-1] for t, _ in result.skipped] == ["test_identity_sequence_cpu"]
