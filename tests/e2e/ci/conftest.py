"""Fixtures of the end-to-end CI-layer tests (helpers: tests/support/ci_helpers.py)."""

from tests.support.ci_helpers import gh  # noqa: F401 - a fixture pytest must see
