"""Text that every writer can encode: a file name of bytes that are not UTF-8 becomes,
through ``os.fsdecode``, a str holding lone surrogates (``\\udcff``), which UTF-8 refuses
to encode. Case ids, diagnostics and results files carry such names as ``\\xff`` instead
(``valid_text``), so the results file, the reports, the history and the manifests are
written and read without a ``UnicodeEncodeError``; the file itself is still opened by its
real path (``Case.source_path``).

Standard library only: model/results.py, which ci/ imports before any install, uses it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["SURROGATE_ESCAPE", "clean_strings", "valid_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")
#: A lone surrogate written as a JSON escape (how ``json.dumps`` wrote one): a results
#: file holding it needs ``clean_strings`` after it is parsed.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate written out: the byte a file name held as
    ``\\xff``, any other as ``\\ud800``; text without one is returned as it is."""
    if not _SURROGATE.search(text):
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def clean_strings(value: Any) -> Any:
    """A JSON value with ``valid_text`` applied to every string in it, keys included."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {clean_strings(k): clean_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_strings(v) for v in value]
    return value
