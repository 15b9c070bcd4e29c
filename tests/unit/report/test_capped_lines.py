"""capped_lines: the first items listed, then one line counting the ones left out."""

from __future__ import annotations

from iree_conformance.report.tables import capped_lines


def _capped(items: list[str], limit: int) -> list[str]:
    return capped_lines(items, limit, lambda x: f"- {x}", lambda n: f"… and {n} more")


def test_a_long_list_is_cut_and_counted():
    assert _capped(["a", "b", "c", "d"], 2) == ["- a", "- b", "… and 2 more"]


def test_a_list_within_the_limit_has_no_more_line():
    assert _capped(["a", "b"], 2) == ["- a", "- b"]
    assert _capped([], 2) == []
