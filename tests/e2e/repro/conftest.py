"""The fixtures of the reproducer end-to-end tests (helpers: tests/support/core_helpers.py)."""

from tests.support.core_helpers import (  # noqa: F401 - fixtures pytest must see
    llvm_cpu,
    worker,
)
