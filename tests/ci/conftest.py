"""Fixtures of the CI-layer tests (helpers live in ci_helpers.py, imported by name)."""

from ci_helpers import gh  # noqa: F401 - a fixture pytest must see
