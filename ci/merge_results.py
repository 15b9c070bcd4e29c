"""Merge the results JSON files of a CI matrix into one file and one Markdown table.

Each input is a results JSON written by `pytest conformance --report-json` (schema 1,
see ARCHITECTURE.md), a folder searched recursively for such files (what
actions/download-artifact leaves), or an earlier merged file. Every outcome is tagged
with the OS, architecture and Python version of the run it came from, so the merged
file keeps enough to diff against another merged file (diff_results.py) and to derive
shard durations (durations.py).

The Markdown renders the report model (``iree_conformance.report.model``, the same one the
Markdown and HTML reports render): one row per OS x Python x target x suite with the
verdict counts (pass / xfail / flaky / fail / xpass / skip, then any other verdict), a
total row, the unexpected results (verdict fail or xpass), the failure groups, expected
failures by stage, flaky cases, cases that differ across targets, the stage funnel and
the worst verdict per case and target.

Examples:
  python -m ci merge-results results/ --output merged.json --markdown merged.md
  python -m ci merge-results a.json b.json --summary        # also to the step summary
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from ci._common import (
    CIError,
    expand_json_inputs,
    load_results,
    md_code,
    md_escape,
    write_report,
)

# The merge itself lives in the library (the HTML report merges the same way); it is
# standard library only, so it imports from the source tree before any install.
from iree_conformance.report import model as report_model
from iree_conformance.report.merging import merge_documents
from iree_conformance.report.tables import funnel_table


def merge(paths: list[Path], base: Path | None = None) -> dict[str, Any]:
    """Merged document from results files and/or merged files (in the given order)."""
    documents = []
    for path in paths:
        data = load_results(path)
        try:
            source = str(path.resolve().relative_to(base.resolve())) if base else path.name
        except ValueError:
            source = path.name
        documents.append((source.replace("\\", "/"), data))
    return merge_documents(documents)


def count_rows(merged: dict[str, Any]) -> list[tuple[tuple[str, str, str, str], Counter]]:
    """[((os/arch, python, target, suite), Counter(verdict -> n))], sorted (the model's counts)."""
    model = report_model.build(merged)
    return sorted(((r.os_arch, r.python, r.target, r.suite), r.counts) for r in model.counts)


def render_markdown(
    merged: dict[str, Any], title: str = "Conformance results", max_listed: int = 50
) -> str:
    """The CI tables of the merged run: the report model's sections, one row per platform."""
    model = report_model.build(merged)
    columns = model.columns
    lines = [f"## {title}", ""]
    lines.append(f"{len(model.runs)} run(s), {len(model.outcomes)} outcome(s).")
    lines.append("")
    lines.append("| OS | Python | Target | Suite | " + " | ".join(columns) + " | total |")
    lines.append("|---|---|---|---|" + "---:|" * (len(columns) + 1))
    for (os_arch, py, target, suite), counts in count_rows(merged):
        cells = [str(counts.get(c, 0)) for c in columns]
        lines.append(
            f"| {md_escape(os_arch)} | {md_escape(py)} | {md_escape(target)} | {md_escape(suite)} | "
            + " | ".join(cells)
            + f" | {sum(counts.values())} |"
        )
    totals = model.totals
    lines.append(
        "| **total** | | | | "
        + " | ".join(f"**{totals.get(c, 0)}**" for c in columns)
        + f" | **{sum(totals.values())}** |"
    )
    unexpected = model.unexpected
    lines.append("")
    if unexpected:
        lines.append(f"### Unexpected results ({len(unexpected)})")
        lines.append("")
        lines.append("| OS | Python | Target | Case | Verdict | Status | Expected | Reason |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for o in unexpected[:max_listed]:
            status = (
                f"{o.get('status')}@{o.get('stage')}" if o.get("stage") else str(o.get("status"))
            )
            lines.append(
                f"| {md_escape(o['os'])} | {md_escape(o['python'])} | {md_escape(o['target'])} | {md_code(o['case_id'], 120)} | "
                f"{md_escape(o['verdict'])} | {md_escape(status)} | {md_escape(o.get('expected') or '')} | "
                f"{md_escape(o.get('reason') or '')} |"
            )
        if len(unexpected) > max_listed:
            lines.append("")
            lines.append(f"…and {len(unexpected) - max_listed} more (see the merged JSON).")
    else:
        lines.append("No unexpected results.")
    lines += _failure_groups(model, max_listed)
    lines += _expected_and_flaky(model)
    lines += _differs(model, max_listed)
    lines += _funnels(model)
    lines += device_matrix(merged, max_listed)
    return "\n".join(lines) + "\n"


def _failure_groups(model: report_model.ReportModel, max_listed: int) -> list[str]:
    groups = model.failure_groups
    if not groups:
        return []
    unexpected = sum(g.unexpected for g in groups)
    lines = [
        "",
        f"### Failure groups ({model.failure_count} failing outcomes in {len(groups)} groups, {unexpected} unexpected)",
        "",
        "| Stage | Count | Unexpected | First error line | Cases |",
        "|---|---:|---:|---|---|",
    ]
    for g in groups[:max_listed]:
        cases = ", ".join(f"{md_code(c, 120)}" for c in g.cases[:3])
        more = f" and {len(g.cases) - 3} more" if len(g.cases) > 3 else ""
        lines.append(
            f"| {md_escape(g.stage)} | {len(g.members)} | {g.unexpected} | {md_code(g.line)} | {cases}{more} |"
        )
    if len(groups) > max_listed:
        lines += ["", f"…and {len(groups) - max_listed} more groups (see the merged JSON)."]
    return lines


def _expected_and_flaky(model: report_model.ReportModel) -> list[str]:
    lines: list[str] = []
    if model.expected_failures:
        lines += ["", "### Expected failures by stage", ""]
        lines += [f"- {kind}: {n}" for kind, n in model.expected_failures]
    if model.flaky:
        lines += ["", f"### Flaky ({len(model.flaky)}): never red, never counted as a pass", ""]
        lines += [
            f"- {md_code(f.case_id, 120)} ({md_escape(f.target)}, {f.platform}): {md_escape(f.seen)}"
            for f in model.flaky
        ]
    return lines


def _differs(model: report_model.ReportModel, max_listed: int) -> list[str]:
    if not model.differs:
        return []
    targets = model.targets
    lines = [
        "",
        f"### Differs across targets ({len(model.differs)})",
        "",
        "| Case | " + " | ".join(md_escape(t) for t in targets) + " |",
        "|---|" + "---|" * len(targets),
    ]
    for d in model.differs[:max_listed]:
        lines.append(
            f"| {md_code(d.case_id, 120)} | "
            + " | ".join(d.by_target.get(t, "-") for t in targets)
            + " |"
        )
    if len(model.differs) > max_listed:
        lines += ["", f"…and {len(model.differs) - max_listed} more (see the merged JSON)."]
    return lines


def _funnels(model: report_model.ReportModel) -> list[str]:
    return funnel_table(
        model,
        "Stage funnel (runnable cases that got through each stage, all platforms)",
        md_escape,
    )


def device_matrix(merged: dict[str, Any], max_listed: int = 50) -> list[str]:
    """One column per target: which cases work on which device (all OSes folded, worst
    verdict shown). Only cases that do not pass everywhere are listed."""
    by_target = report_model.build(merged).by_target
    targets = by_target.targets
    if len(targets) < 2:
        return []
    listed = by_target.rows
    lines = [
        "",
        f"### By target ({len(listed)} of {by_target.case_count} cases do not pass on every target)",
        "",
    ]
    lines.append("| Case | " + " | ".join(md_escape(t) for t in targets) + " |")
    lines.append("|---|" + "---|" * len(targets))
    for case, row in listed[:max_listed]:
        lines.append(
            f"| {md_code(case, 120)} | " + " | ".join(row.get(t, "-") for t in targets) + " |"
        )
    if len(listed) > max_listed:
        lines += ["", f"…and {len(listed) - max_listed} more (see the merged JSON)."]
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "inputs", nargs="+", metavar="RESULTS", help="results JSON files or folders of them"
    )
    parser.add_argument("--output", metavar="FILE", help="write the merged JSON here")
    parser.add_argument("--markdown", metavar="FILE", help="write the Markdown table here")
    parser.add_argument("--title", default="Conformance results", help="Markdown heading")
    parser.add_argument(
        "--max-listed", type=int, default=50, help="unexpected results listed (default 50)"
    )
    parser.add_argument(
        "--summary", action="store_true", help="append the Markdown to $GITHUB_STEP_SUMMARY"
    )


def run(args: argparse.Namespace) -> int:
    paths = expand_json_inputs(args.inputs)
    if args.output:
        out = Path(args.output).resolve()
        paths = [p for p in paths if p.resolve() != out]  # re-running into the same folder
    if not paths:
        raise CIError("no results JSON files found in " + ", ".join(args.inputs))
    common = (
        Path(args.inputs[0]) if len(args.inputs) == 1 and Path(args.inputs[0]).is_dir() else None
    )
    merged = merge(paths, base=common)
    markdown = render_markdown(merged, args.title, args.max_listed)
    write_report(merged, markdown, args.output, args.markdown, args.summary)
    return 0
