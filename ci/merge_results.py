"""Merge the results JSON files of a CI matrix into one file and one Markdown table.

Each input is a results JSON written by `pytest conformance --report-json` (schema 1,
see ARCHITECTURE.md), a folder searched recursively for such files (what
actions/download-artifact leaves), or an earlier merged file. Every outcome is tagged
with the OS, architecture and Python version of the run it came from, so the merged
file keeps enough to diff against another merged file (diff_results.py) and to derive
shard durations (durations.py).

The Markdown has one row per OS x Python x target x suite with the verdict counts
(pass / xfail / flaky / fail / xpass / skip), a total row, and the list of unexpected results
(verdict fail or xpass).

Examples:
  python ci/merge_results.py results/ --output merged.json --markdown merged.md
  python ci/merge_results.py a.json b.json --summary        # also to the step summary
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    CIError,
    expand_json_inputs,
    load_results,
    md_escape,
    run_main,
    write_report,
)

# The merge itself lives in the library (the HTML report merges the same way); it is
# standard library only, so it imports from the source tree before any install.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from iree_conformance.merging import merge_documents, python_minor, suite_of  # noqa: E402
from iree_conformance.results import VERDICTS  # noqa: E402, F401 - the verdict columns
from iree_conformance.vocabulary import RED_VERDICTS  # noqa: E402

UNEXPECTED = RED_VERDICTS


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
    """[((os/arch, python, target, suite), Counter(verdict -> n))], sorted."""
    table: dict[tuple[str, str, str, str], Counter] = defaultdict(Counter)
    for run in merged["runs"]:
        # A run with no outcomes (an empty shard) still gets a row per target.
        if not run.get("outcome_count"):
            for target in run.get("targets") or ["?"]:
                table[(f"{run['os']}/{run['arch']}", python_minor(run["python"]), target, "(none)")]
    for o in merged["outcomes"]:
        key = (f"{o['os']}/{o['arch']}", str(o["python"]), str(o["target"]), suite_of(o))
        verdict = o.get("verdict") if o.get("verdict") in VERDICTS else "other"
        table[key][verdict] += 1
    return sorted(table.items())


def render_markdown(
    merged: dict[str, Any], title: str = "Conformance results", max_listed: int = 50
) -> str:
    rows = count_rows(merged)
    has_other = any(c.get("other") for _, c in rows)
    columns = [*VERDICTS, *(["other"] if has_other else [])]
    lines = [f"## {title}", ""]
    lines.append(f"{len(merged['runs'])} run(s), {len(merged['outcomes'])} outcome(s).")
    lines.append("")
    lines.append("| OS | Python | Target | Suite | " + " | ".join(columns) + " | total |")
    lines.append("|---|---|---|---|" + "---:|" * (len(columns) + 1))
    totals: Counter = Counter()
    for (os_arch, py, target, suite), counts in rows:
        totals.update(counts)
        cells = [str(counts.get(c, 0)) for c in columns]
        lines.append(
            f"| {os_arch} | {py} | {md_escape(target)} | {md_escape(suite)} | "
            + " | ".join(cells)
            + f" | {sum(counts.values())} |"
        )
    lines.append(
        "| **total** | | | | "
        + " | ".join(f"**{totals.get(c, 0)}**" for c in columns)
        + f" | **{sum(totals.values())}** |"
    )
    unexpected = [o for o in merged["outcomes"] if o.get("verdict") in UNEXPECTED]
    lines.append("")
    if unexpected:
        lines.append(f"### Unexpected results ({len(unexpected)})")
        lines.append("")
        lines.append("| OS | Python | Target | Case | Verdict | Status | Expected | Reason |")
        lines.append("|---|---|---|---|---|---|---|---|")
        unexpected.sort(key=lambda o: (o["os"], str(o["python"]), o["target"], o["case_id"]))
        for o in unexpected[:max_listed]:
            status = (
                f"{o.get('status')}@{o.get('stage')}" if o.get("stage") else str(o.get("status"))
            )
            lines.append(
                f"| {o['os']} | {o['python']} | {md_escape(o['target'])} | `{md_escape(o['case_id'], 120)}` | "
                f"{o['verdict']} | {md_escape(status)} | {md_escape(o.get('expected') or '')} | "
                f"{md_escape(o.get('reason') or '')} |"
            )
        if len(unexpected) > max_listed:
            lines.append("")
            lines.append(f"…and {len(unexpected) - max_listed} more (see the merged JSON).")
    else:
        lines.append("No unexpected results.")
    lines += device_matrix(merged, max_listed)
    return "\n".join(lines) + "\n"


# Worst first: the verdict a (case, target) cell shows when OSes disagree.
_SEVERITY = ["fail", "xpass", "flaky", "xfail", "skip", "pass"]


def device_matrix(merged: dict[str, Any], max_listed: int = 50) -> list[str]:
    """One column per target: which cases work on which device (all OSes folded, worst
    verdict shown). Only cases that do not pass everywhere are listed."""
    targets = sorted({str(o["target"]) for o in merged["outcomes"]})
    if len(targets) < 2:
        return []
    cells: dict[str, dict[str, str]] = {}
    for o in merged["outcomes"]:
        verdict = o.get("verdict") if o.get("verdict") in _SEVERITY else "fail"
        row = cells.setdefault(o["case_id"], {})
        old = row.get(str(o["target"]))
        if old is None or _SEVERITY.index(verdict) < _SEVERITY.index(old):
            row[str(o["target"])] = verdict
    listed = sorted(
        case
        for case, row in cells.items()
        if any(v != "pass" for v in row.values()) or len(row) < len(targets)
    )
    lines = [
        "",
        f"### By target ({len(listed)} of {len(cells)} cases do not pass on every target)",
        "",
    ]
    lines.append("| Case | " + " | ".join(md_escape(t) for t in targets) + " |")
    lines.append("|---|" + "---|" * len(targets))
    for case in listed[:max_listed]:
        lines.append(
            f"| `{md_escape(case, 120)}` | "
            + " | ".join(cells[case].get(t, "-") for t in targets)
            + " |"
        )
    if len(listed) > max_listed:
        lines += ["", f"…and {len(listed) - max_listed} more (see the merged JSON)."]
    return lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="merge_results.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(run_main(main))
