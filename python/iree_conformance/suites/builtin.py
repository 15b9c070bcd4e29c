"""This package's own ``pytest_conformance_suites`` implementation: the built-in suites.

The plugin registers this module with pytest's plugin manager (as
``iree-conformance-suites``) when it adds its hook specifications.
"""

from __future__ import annotations

from iree_conformance.suites.base import Suite
from iree_conformance.suites.registry import builtin_suites


def pytest_conformance_suites() -> list[Suite]:
    return builtin_suites()
