"""The GitHub token: read from the environment, never shown.

The value lives only inside :class:`Token`; its str/repr are redacted and
:func:`redact` scrubs it from any text we are about to print or raise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NoReturn

from .errors import ApiError

TOKEN_VARS = ("GITHUB_TOKEN", "GH_TOKEN")
REDACTED = "***"


class Token:
    __slots__ = ("_value", "source")

    def __init__(self, value: str, source: str) -> None:
        self._value = value
        self.source = source  # the variable name, safe to show

    def reveal(self) -> str:
        """The secret itself; only for building the Authorization header."""
        return self._value

    def __repr__(self) -> str:
        return f"Token(from {self.source}, {REDACTED})"

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:  # keep it out of pickles too
        raise TypeError("tokens are not picklable")


def token_from_env(env: Mapping[str, str] | None = None, required: bool = True) -> Token | None:
    """First non-empty of GITHUB_TOKEN, GH_TOKEN."""
    env = os.environ if env is None else env
    for name in TOKEN_VARS:
        value = env.get(name, "").strip()
        if value:
            return Token(value, name)
    if required:
        raise ApiError(
            "no GitHub token: set GITHUB_TOKEN (in a workflow: env: GITHUB_TOKEN: ${{ github.token }}, "
            "with permissions: actions: write for prune, read for audit) or GH_TOKEN"
        )
    return None


def redact(text: str, token: Token | None) -> str:
    """Replace every occurrence of the token in ``text``."""
    if token is None or not token.reveal():
        return text
    return text.replace(token.reveal(), REDACTED)
