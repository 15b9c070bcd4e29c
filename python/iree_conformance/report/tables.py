"""Markdown tables rendered from the report model, shared by the report's Markdown
(``report.markdown``) and the CI job summary (``ci.merge_results``), and the escaping of
untrusted text (case ids, targets, diagnostics) they all use: ``md_text`` for prose and
cells, ``md_code`` for a case id or a diagnostic line shown as code.

Standard library only: ci/ imports it from the source tree before any install.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from iree_conformance.common.markdown_escape import md_code, md_text
from iree_conformance.report import model as report_model

__all__ = ["capped_lines", "funnel_table", "md_code", "md_text"]

T = TypeVar("T")


def funnel_table(
    model: report_model.ReportModel, title: str, escape: Callable[[str], str] = md_text
) -> list[str]:
    """The stage funnel (runnable cases that got through each stage) as Markdown lines,
    a blank line and the heading first; no lines when the model has no funnel."""
    if not model.funnels:
        return []
    steps = report_model.FUNNEL_STEPS
    lines = [
        "",
        f"### {title}",
        "",
        "| suite | target | runnable | " + " | ".join(steps) + " |",
        "|---|---|" + "---:|" * (len(steps) + 1),
    ]
    for f in model.funnels:
        lines.append(
            f"| {escape(f.suite)} | {escape(f.target)} | {f.runnable} | "
            + " | ".join(str(f.passed[s]) for s in steps)
            + " |"
        )
    return lines


def capped_lines(
    items: Sequence[T], limit: int, line: Callable[[T], str], more: Callable[[int], str]
) -> list[str]:
    """A line per item for the first ``limit`` items, then ``more(how many were left out)``
    when any were."""
    lines = [line(item) for item in items[:limit]]
    if len(items) > limit:
        lines.append(more(len(items) - limit))
    return lines
