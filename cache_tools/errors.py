"""Error types with the exit codes the CLI maps them to.

Every message names the thing that failed and what to do about it; none may
contain a credential (the API client redacts tokens before raising).

cache-tools is its own distribution and runs without the conformance suite, so its error
base is its own (``return_code``; ``exit_code`` is the same number). The numbers are the
project's one table (``iree_conformance.common.errors.EXIT_CODES``, shared with
``iree-conformance`` and the ci/ scripts): tests/unit/core/test_exit_codes.py checks that
these three equal it, and ci/ catches ``CacheToolsError`` beside its own base.
"""

from __future__ import annotations

__all__ = [
    "EXIT_API",
    "EXIT_INPUT",
    "EXIT_THRESHOLD",
    "ApiError",
    "CacheToolsError",
    "ConfigError",
    "KeyRuleError",
    "MeasureError",
]

EXIT_INPUT = 2  # bad arguments, config, paths: the table's configuration kind
EXIT_THRESHOLD = 6  # audit --fail-over tripped
EXIT_API = 7  # the GitHub API failed or answered nonsense


class CacheToolsError(Exception):
    """Base class: an expected failure with a user-facing message."""

    return_code: int = EXIT_INPUT

    @property
    def exit_code(self) -> int:
        return self.return_code


class ConfigError(CacheToolsError):
    """The TOML config is missing, unparsable or inconsistent."""


class MeasureError(CacheToolsError):
    """A path to archive is missing or unreadable."""


class KeyRuleError(CacheToolsError):
    """A cache key breaks GitHub's key rules or our key grammar."""


class ApiError(CacheToolsError):
    """The GitHub REST API failed, refused, or answered malformed data."""

    return_code = EXIT_API

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
