"""Untrusted text (case ids, targets, diagnostics, metadata) made inert in Markdown that
GitHub renders: the report, the job summary, the pull-request comment's neighbours and
``compare-upstream``'s tables. ``md_text`` for prose and table cells, ``md_code`` for a
case id or a diagnostic line shown as code, ``plain_text`` for a terminal (control
characters such as ESC, BEL, NUL and the bidirectional overrides removed).

Standard library only: ci/ imports it (through ``report.tables``) before any install.
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["md_code", "md_text", "plain_text"]

_MENTION_AT = re.compile(r"(?<![0-9A-Za-z_])@")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")
_ASCII_PUNCT = re.compile(r"[!-/:-@\[-`{-~]")
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~])")  # not _: intraword (onnx_ops) is no emphasis in GFM


def _one_line(value: Any, limit: int | None) -> str:
    text = " ".join(_CONTROL.sub(" ", str(value if value is not None else "")).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def md_text(value: Any, limit: int | None = None) -> str:
    """Untrusted text as inert Markdown on one line, safe in a table cell: HTML escaped
    (``<script>`` shows as text), Markdown's emphasis, link, code and ``|`` characters
    backslash-escaped."""
    text = html.escape(_one_line(value, limit), quote=False)
    # A zero-width space after an @ that could start a mention keeps "@name" from notifying
    # anyone; an @ inside a word ("fail@compare", an e-mail address) mentions no one.
    return _MENTION_AT.sub("@\u200b", _MD_SPECIAL.sub(r"\\\1", text))


def plain_text(value: Any, limit: int | None = None) -> str:
    """Untrusted text for a terminal: one line, its control characters (escape sequences,
    bells, NULs, bidirectional overrides) replaced by spaces."""
    return _one_line(value, limit)


def md_code(value: Any, limit: int | None = None) -> str:
    """Untrusted text shown as inline code, safe in a table cell and in a list: a plain
    code span when it can hold it (no backtick, ``|`` or markup character), else
    ``<code>`` with every ASCII punctuation character as a character reference (Markdown
    still parses inside inline HTML: a ``[l](http://evil)`` there would be a live link)
    and an @ that could mention someone broken as ``md_text`` does: the raw text never
    reaches the page, and no link, image, emphasis or autolink can form."""
    text = _one_line(value, limit)
    if text.strip() and not any(c in text for c in "`|<>&"):
        return f"`{text}`"
    escaped = _ASCII_PUNCT.sub(lambda m: f"&#{ord(m.group())};", _MENTION_AT.sub("@\u200b", text))
    return f"<code>{escaped}</code>"
