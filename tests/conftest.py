"""Options shared by every test folder: tests marked `slow` (they run act or other long
jobs) run only with --run-slow."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# pytester runs pytest (here: `pytest conformance ...`) from a test and parses its outcomes.
pytest_plugins = ["pytester"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run the tests marked slow")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long tests (act runs); skipped unless --run-slow")
    # The tests' compiles and timings share a lock of their own (common/quiet_lock.py), not
    # the one of a benchmark the developer runs beside them. Set before xdist starts its
    # workers, which inherit it.
    os.environ.setdefault(
        "IREE_CONFORMANCE_QUIET_LOCK",
        str(Path(tempfile.gettempdir()) / "iree-conformance-tests-quiet.lock"),
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
