"""Fixtures for the ONNX data-layer tests.

This folder deliberately has no ``__init__.py``: as a package named ``onnx`` it could
shadow the real onnx package once its parent folder is on ``sys.path``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    import iree_conformance  # noqa: F401
except ImportError:  # running from a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
if str(Path(__file__).resolve().parent) not in sys.path:  # for onnx_testlib
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from onnx_testlib import LoopbackServer  # noqa: E402


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    """An HTTP server on 127.0.0.1 with scriptable routes (see onnx_testlib)."""
    srv = LoopbackServer()
    try:
        yield srv
    finally:
        srv.close()
