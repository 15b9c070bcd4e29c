"""The hooks this plugin adds to pytest (registered with ``pluginmanager.add_hookspecs``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from iree_conformance.suites.base import Suite


@pytest.hookspec
def pytest_conformance_suites() -> list[Suite]:  # type: ignore[empty-body]
    """The suites a plugin or conftest.py adds to the conformance run.

    Each implementation returns a list of ``Suite`` objects (``suites/base.py``); the
    built-in suites come from this package's own implementation. Names must be unique
    across all implementations.
    """


@pytest.hookspec
def pytest_conformance_folder() -> Path | None:
    """The conformance folder a conftest.py names (``conformance/conftest.py`` returns its own).

    The plugin (a ``pytest11`` entry point) stays inert in any pytest run whose initial
    conftests name no conformance folder; when one does, it adds its options, and the
    folder holds ``targets.toml``, ``expectations/`` and ``test_conformance.py``.
    """
