"""Fixtures for the ONNX data-layer tests (helpers: tests/support/onnx_testlib.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    import iree_conformance  # noqa: F401
except ImportError:  # running from a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python"))

from tests.support.onnx_testlib import LoopbackServer  # noqa: E402


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    """An HTTP server on 127.0.0.1 with scriptable routes (see onnx_testlib)."""
    srv = LoopbackServer()
    try:
        yield srv
    finally:
        srv.close()
