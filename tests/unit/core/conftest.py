"""The fixtures of the core unit tests (helpers: tests/support/core_helpers.py)."""

from tests.support.core_helpers import store  # noqa: F401 - a fixture pytest must see
