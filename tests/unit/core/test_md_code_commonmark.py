"""``md_code`` rendered by a real CommonMark renderer (markdown-it-py, the dev extra): its
``<code>`` fallback, taken for text with a backtick, ``|``, ``<`` or ``&``, gives no link,
image, emphasis or autolink, and shows the text as it was (issue 58, item 5)."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from iree_conformance.common.markdown_escape import md_code

HOSTILE = [
    "a|b [l](http://evil)",
    "x` ![p](http://evil/p.png)",
    "<b> [l]: http://evil and [l] too",
    "a & <http://evil> *em* **strong** _u_ ~~s~~ \\` [x][y]",
    "`[l](javascript:alert(1))` &amp; &lt;script&gt;",
]


def _render(text: str) -> str:
    """In a list item and a table cell (GFM's tables and strikethrough enabled)."""
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    return md.render(f"- {text}\n\n| a | b |\n|---|---|\n| {text} | c |\n")


@pytest.mark.parametrize("value", HOSTILE)
def test_the_code_fallback_renders_no_link_image_or_emphasis(value):
    code = md_code(value)
    assert code.startswith("<code>")  # the fallback, not a code span
    page = _render(code)
    tags = set(re.findall(r"<(\w+)", page))
    assert tags <= {"ul", "li", "p", "code", "table", "thead", "tbody", "tr", "th", "td"}, page
    shown = re.findall(r"<code>(.*?)</code>", page)
    assert [html.unescape(s) for s in shown] == [value, value]  # one table cell, whole


def test_a_mention_in_the_fallback_notifies_no_one():
    page = _render(md_code("a|b @someone"))
    assert "@someone" not in html.unescape(page) and "@\u200bsomeone" in html.unescape(page)
