"""Error types with the exit codes the CLI maps them to.

Every message names the thing that failed and what to do about it; none may
contain a credential (the API client redacts tokens before raising).
``CacheToolsError`` derives from the project's one error base,
``iree_conformance.common.errors.ConformanceError`` (``return_code``; ``exit_code`` is
the same number). The exit statuses come from that module's one table
(``EXIT_CODES``), shared with ``iree-conformance`` and the ci/ scripts.
"""

from __future__ import annotations

from iree_conformance.common.errors import (
    EXIT_API,  # GitHub API failed or answered nonsense
    EXIT_CONFIGURATION,
    EXIT_THRESHOLD,  # audit --fail-over tripped
    ConformanceError,
)

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

EXIT_INPUT = EXIT_CONFIGURATION  # bad arguments, config, paths: the configuration kind


class CacheToolsError(ConformanceError):
    """Base class: an expected failure with a user-facing message."""

    return_code = EXIT_INPUT


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
