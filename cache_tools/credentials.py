"""The GitHub token: read from the environment, never shown.

The value lives only inside :class:`Token`; its str/repr are redacted and
:func:`redact` scrubs it from any text we are about to print or raise.
"""

from __future__ import annotations

import base64
import os
import re
import urllib.parse
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


def _base64_cores(secret: bytes) -> set[str]:
    """The characters of ``secret`` base64-encoded at each of the three byte alignments
    it can have inside a longer encoded text (a server echoing ``Bearer <token>`` or
    ``user:<token>`` base64-encoded), in the standard and the URL-safe alphabet, without
    the partial characters at either end that depend on neighbouring bytes."""
    cores = set()
    for k in range(3):
        encoded = base64.b64encode(b"\0" * k + secret).decode("ascii").rstrip("=")
        start = (0, 2, 3)[k]  # characters that also hold the k prefix bytes
        end = len(encoded) - (1 if (k + len(secret)) % 3 else 0)  # the last, partial one
        core = encoded[start:end]
        if len(core) >= 8:
            cores.add(core)
            cores.add(core.replace("+", "-").replace("/", "_"))
    return cores


def _forms(secret: str) -> list[str]:
    """The secret as it may appear in text: as is, percent-encoded, base64-encoded."""
    forms = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret)}
    forms |= _base64_cores(secret.encode("utf-8"))
    return sorted(forms, key=len, reverse=True)


_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")
_URL_QUERY = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s?#]+)\?([^\s#]*)")
_SECRET_PARAM = re.compile(r"(?i)token|key|sig|secret|pass|auth|code|credential")


def redact_url(url: str) -> str:
    """Text with every URL's credentials (``user:token@``) and any query string that
    names a secret (``?access_token=``) replaced: what may be shown of a URL a user gave
    (``--api-url``)."""

    def query(m: re.Match[str]) -> str:  # page=2 stays; access_token=... does not
        return m.group(1) + "?" + (REDACTED if _SECRET_PARAM.search(m.group(2)) else m.group(2))

    return _URL_QUERY.sub(query, _URL_USERINFO.sub(r"\1" + REDACTED + "@", url))


def redact(text: str, token: Token | str | None) -> str:
    """Replace every occurrence of the token in ``text``: as is, percent-encoded and
    base64-encoded (a server may echo the Authorization header back encoded); and the
    credentials of any URL in it."""
    secret = token.reveal() if isinstance(token, Token) else token
    if secret:
        for form in _forms(secret):
            text = text.replace(form, REDACTED)
    return redact_url(text)


def url_secrets(url: str) -> list[str]:
    """What of a URL a user gave (``--api-url``) is a credential: its user and password and
    the values of query parameters that name a secret. An HTTP library's error may show the
    URL's path and query without the scheme, where :func:`redact_url` cannot see it is one."""
    parts = urllib.parse.urlsplit(url)
    found = [parts.username or "", parts.password or ""]
    found += [v for k, v in urllib.parse.parse_qsl(parts.query) if _SECRET_PARAM.search(k)]
    return [secret for secret in found if secret]
