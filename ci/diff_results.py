"""Compare current conformance results with a baseline: new failures, new passes, changes.

Both sides may be results JSON files, merged files (merge_results.py) or folders of
them. Cases are matched on (OS, architecture, target, case_id); when a side has the same
case several times (two Python versions on one OS), its worst status counts.

Statuses are grouped as: passing (pass), failing (fail, error, crash, timeout) and
skipped (skip). Reported:

  new failures  failing now; passing, skipped or absent in the baseline
  new passes    passing now; failing in the baseline
  changed       failing on both sides, but with another status or stage
                (e.g. fail-compile became a numerics failure)
  speed         significantly slower or larger (report/speed.py); a time change only
                when both sides timed the case at least twice (ci run-shard's timing
                confirm), and speed_runs: how many timing runs each side had

Platforms present on only one side are named instead of listing all their cases.
Without a baseline (first run, expired artifact) the report says so and, with
--missing-baseline-ok, exits 0.

Examples:
  python -m ci diff-results --current merged.json --baseline baseline/ --markdown diff.md
  python -m ci diff-results --current results/ --baseline old.json --fail-on-new-failures
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ci._common import CIError, expand_json_inputs, md_code, md_escape, write_report
from ci.merge_results import merge
from iree_conformance.common.vocabulary import FAILING_STATUSES, Status, Verdict
from iree_conformance.expectations.known_issues import (
    KnownIssues,
    default_path,
    issue_of,
    load_known_issues,
)
from iree_conformance.model.results import diff_outcomes
from iree_conformance.report.merging import suite_of
from iree_conformance.report.model import first_line, is_not_judged
from iree_conformance.report.speed import compare_results as compare_speed
from iree_conformance.report.speed import figures, runs_of

OTHER = "other"  # a status this version does not know
_RANK = {Status.FAIL: 3, Status.PASS: 2, Status.SKIP: 1, OTHER: 0}

Key = tuple[str, str, str]  # (os/arch, target, case_id)
MIN_TIME_RUNS = 2  # timing runs a side needs before a time change is listed


def status_class(status: str | None) -> str:
    """pass, fail (every failing status), skip or other."""
    if status == Status.PASS:
        return Status.PASS
    if status in FAILING_STATUSES:
        return Status.FAIL
    if status == Status.SKIP:
        return Status.SKIP
    return OTHER


def describe(outcome: dict[str, Any] | None) -> str:
    if outcome is None:
        return "absent"
    status = str(outcome.get("status"))
    failing = status in FAILING_STATUSES
    return f"{status}@{outcome['stage']}" if failing and outcome.get("stage") else status


def index(merged: dict[str, Any]) -> dict[Key, dict[str, Any]]:
    """One outcome per key: the worst status of its duplicates."""
    table: dict[Key, dict[str, Any]] = {}
    for o in merged["outcomes"]:
        key = (f"{o['os']}/{o['arch']}", str(o["target"]), str(o["case_id"]))
        old = table.get(key)
        if (
            old is None
            or _RANK[status_class(o.get("status"))] > _RANK[status_class(old.get("status"))]
        ):
            table[key] = o
    return table


def platforms(merged: dict[str, Any]) -> set[str]:
    return {f"{r.get('os', '?')}/{r.get('arch', '?')}" for r in merged["runs"]}


def pass_counts(
    current: dict[str, Any], baseline: dict[str, Any] | None, shared: set[str] | None = None
) -> list[dict[str, Any]]:
    """Passing cases per suite and target on each side (platforms in shared only, when
    given): [{"suite", "target", "now", "before"}], before None without a baseline."""
    counts: dict[tuple[str, str], dict[str, Any]] = {}
    sides = [("now", current)] + ([("before", baseline)] if baseline is not None else [])
    for side, merged in sides:
        for (platform, target, _), o in index(merged).items():
            if shared is not None and platform not in shared:
                continue
            row = counts.setdefault(
                (suite_of(o), target), {"now": 0, "before": None if baseline is None else 0}
            )
            row[side] += o.get("status") == Status.PASS
    return [{"suite": k[0], "target": k[1], **v} for k, v in sorted(counts.items())]


def not_judged_cases(current: dict[str, Any]) -> list[dict[str, Any]]:
    """The current side's cases the harness could not judge (report.model.is_not_judged):
    never a new failure nor a new pass, listed apart."""
    return [
        {
            "platform": f"{o['os']}/{o['arch']}",
            "target": str(o["target"]),
            "case_id": str(o["case_id"]),
            "reason": first_line(o),
        }
        for o in sorted(current["outcomes"], key=lambda o: (o["os"], o["target"], o["case_id"]))
        if is_not_judged(o)
    ]


def flaky_cases(current: dict[str, Any]) -> list[dict[str, Any]]:
    """The current side's flaky verdicts: [{"platform", "target", "case_id", "reason"}]."""
    return [
        {
            "platform": f"{o['os']}/{o['arch']}",
            "target": str(o["target"]),
            "case_id": str(o["case_id"]),
            "reason": str(o.get("reason") or ""),
        }
        for o in sorted(current["outcomes"], key=lambda o: (o["os"], o["target"], o["case_id"]))
        if o.get("verdict") == Verdict.FLAKY
    ]


def compare(
    current: dict[str, Any], baseline: dict[str, Any], known: KnownIssues | None = None
) -> dict[str, Any]:
    """The differences; a new failure whose signature is a known issue (its manifest
    entry's, or conformance/known_issues.toml's) says "matches iree-org/iree#N"."""
    known = known if known is not None else load_known_issues(default_path())
    cur_platforms, base_platforms = platforms(current), platforms(baseline)
    shared = cur_platforms & base_platforms
    cur = {k: o for k, o in index(current).items() if k[0] in shared}
    base = {k: o for k, o in index(baseline).items() if k[0] in shared}
    diff = diff_outcomes(base, cur, ("status", "stage"))
    speed, speed_runs = speed_changes(cur, base, shared)
    new_failures, new_passes, changed = [], [], []
    for key in diff.changed_keys:
        now, before = cur.get(key), base.get(key)
        if now is None:  # removed: counted below
            continue
        if is_not_judged(now):  # neither IREE's failure nor a pass: listed apart
            continue
        now_class = status_class(now.get("status"))
        before_class = status_class(before.get("status")) if before else None
        entry = {
            "platform": key[0],
            "target": key[1],
            "case_id": key[2],
            "now": describe(now),
            "before": describe(before),
            "reason": now.get("reason") or "",
            # a user's program: what the harness did beyond it (model/preparation.py)
            "steps": "; ".join(map(str, (now.get("info") or {}).get("preparation") or [])),
        }
        issue = issue_of(now, known, first_line(now)) if now_class == Status.FAIL else None
        if issue:
            entry["issue"] = issue
        if now_class == Status.FAIL and before_class != Status.FAIL:
            new_failures.append(entry)
        elif now_class == Status.PASS and before_class == Status.FAIL:
            new_passes.append(entry)
        elif (
            now_class == Status.FAIL
            and before_class == Status.FAIL
            and entry["now"] != entry["before"]
        ):
            changed.append(entry)
    return {
        "compared_platforms": sorted(shared),
        "only_current": sorted(cur_platforms - base_platforms),
        "only_baseline": sorted(base_platforms - cur_platforms),
        "new_failures": new_failures,
        "new_passes": new_passes,
        "changed": changed,
        "added": len(diff.only_after),
        "removed": len(diff.only_before),
        "pass_counts": pass_counts(current, baseline, shared),
        "flaky": flaky_cases(current),
        "not_judged": not_judged_cases(current),
        "speed": speed,
        "speed_runs": speed_runs,
    }


def timing_runs(outcome: dict[str, Any] | None) -> int:
    """How many timing runs an outcome has: its own figures and its confirm_runs
    (ci run-shard --timing-confirm); 0 without figures."""
    bench = figures(outcome) if outcome is not None else None
    return len(runs_of(bench)) if bench is not None else 0


def speed_changes(
    cur: dict[Key, dict[str, Any]], base: dict[Key, dict[str, Any]], shared: set[str]
) -> tuple[list[dict[str, str]], dict[str, int]]:
    """Cases significantly slower or larger than the baseline, per shared platform
    (report/speed.compare_results), and how many timing runs each side had.

    A time change is listed only when both sides had at least MIN_TIME_RUNS runs of the
    case: with one run a side, a busy moment of a shared runner moves the whole run and
    passes for a change (an A/A comparison flags a third of the cases; docs/speed.md).
    Memory and module size are listed either way.
    Returns (changes, runs): runs = {"timed": cases timed on both sides, "baseline_min",
    "baseline_max", "current_min", "current_max": runs per case, "time_not_judged":
    timed cases with fewer runs than that on a side}."""
    out = []
    counts: dict[str, list[int]] = {"baseline": [], "current": []}
    not_judged = 0
    for platform in sorted(shared):
        now = {k[1:]: o for k, o in cur.items() if k[0] == platform}
        before = {k[1:]: o for k, o in base.items() if k[0] == platform}
        for key in sorted(now.keys() & before.keys()):
            runs_now, runs_before = timing_runs(now[key]), timing_runs(before[key])
            if runs_now and runs_before:
                counts["current"].append(runs_now)
                counts["baseline"].append(runs_before)
                not_judged += min(runs_now, runs_before) < MIN_TIME_RUNS
        for change in compare_speed(list(before.values()), list(now.values())).changes:
            if not change.worse:
                continue
            fewest = min(timing_runs(now.get(change.key)), timing_runs(before.get(change.key)))
            if change.kind == "time" and fewest < MIN_TIME_RUNS:
                continue
            out.append(
                {
                    "platform": platform,
                    "target": change.key[0],
                    "case_id": change.key[1],
                    "change": change.describe(),
                }
            )
    runs = {"timed": len(counts["current"]), "time_not_judged": not_judged}
    for side, values in counts.items():
        runs[f"{side}_min"] = min(values, default=0)
        runs[f"{side}_max"] = max(values, default=0)
    return out, runs


def _span(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def speed_lines(runs: dict[str, int] | None) -> list[str]:
    """What the speed comparison rested on, and, when it is so, why time changes are not
    listed (shared by the step summary and the pull request comment)."""
    if not runs or not runs.get("timed"):
        return []
    lines = [
        f"Speed: {runs['timed']} case(s) timed on both sides, "
        f"{_span(runs['baseline_min'], runs['baseline_max'])} timing run(s) per case in the "
        f"baseline, {_span(runs['current_min'], runs['current_max'])} now."
    ]
    if runs.get("time_not_judged"):
        lines.append(
            f"Time changes of {runs['time_not_judged']} case(s) are not listed: with one "
            "timing run on a side, the runner's noise cannot be told from a change "
            "(docs/ci-pull-requests.md); memory and module size are."
        )
    return lines


def _table(entries: list[dict[str, Any]], limit: int, with_reason: bool) -> list[str]:
    head = "| Platform | Target | Case | Now | Before |" + (" Reason |" if with_reason else "")
    rule = "|---|---|---|---|---|" + ("---|" if with_reason else "")
    lines = [head, rule]
    for e in entries[:limit]:
        line = (
            f"| {e['platform']} | {md_escape(e['target'])} | {md_code(e['case_id'], 120)} | "
            f"{md_escape(e['now'])} | {md_escape(e['before'])} |"
        )
        lines.append(line + (f" {md_escape(e['reason'])} |" if with_reason else ""))
    if len(entries) > limit:
        lines += ["", f"…and {len(entries) - limit} more (see the diff JSON)."]
    return lines


def render_markdown(diff: dict[str, Any] | None, label: str, limit: int = 50) -> str:
    lines = [f"## Changes against {label}", ""]
    if diff is None:
        lines.append("No baseline results were found, so there is nothing to compare with yet.")
        return "\n".join(lines) + "\n"
    nf, np_, ch = diff["new_failures"], diff["new_passes"], diff["changed"]
    lines.append(
        f"**{len(nf)} new failure(s)**, **{len(np_)} new pass(es)**, {len(ch)} changed failure(s); "
        f"{diff['added']} case(s) added, {diff['removed']} removed. "
        f"Compared on: {', '.join(diff['compared_platforms']) or 'no common platform'}."
    )
    for name, plats in (
        ("only in the current results", diff["only_current"]),
        ("only in the baseline", diff["only_baseline"]),
    ):
        if plats:
            lines += ["", f"Platforms {name} (not compared): {', '.join(plats)}."]
    for title, entries, with_reason in (
        ("New failures", nf, True),
        ("New passes", np_, False),
        ("Changed failures", ch, True),
    ):
        if entries:
            lines += ["", f"### {title} ({len(entries)})", ""]
            lines += _table(entries, limit, with_reason)
    slower = diff.get("speed") or []
    about_speed = speed_lines(diff.get("speed_runs"))
    if slower:
        lines += ["", f"### Significantly slower or larger ({len(slower)})", ""]
        lines += [*about_speed, ""] if about_speed else []
        lines += ["| Platform | Target | Case | Change |", "|---|---|---|---|"]
        lines += [
            f"| {e['platform']} | {md_escape(e['target'])} | `{md_escape(e['case_id'], 120)}` | "
            f"{md_escape(e['change'])} |"
            for e in slower[:limit]
        ]
    elif about_speed:
        lines += ["", *about_speed]
    return "\n".join(lines) + "\n"


def load_side(inputs: list[str]) -> dict[str, Any] | None:
    existing = [p for p in inputs if Path(p).exists()]
    if not existing:
        return None
    paths = expand_json_inputs(existing)
    return merge(paths) if paths else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--current",
        nargs="+",
        required=True,
        metavar="PATH",
        help="current results (files/folders)",
    )
    parser.add_argument(
        "--baseline",
        nargs="+",
        required=True,
        metavar="PATH",
        help="baseline results (files/folders)",
    )
    parser.add_argument(
        "--label", default="the last default-branch results", help="what the baseline is (heading)"
    )
    parser.add_argument("--output", metavar="FILE", help="write the diff as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="write the Markdown report")
    parser.add_argument(
        "--summary", action="store_true", help="append the Markdown to $GITHUB_STEP_SUMMARY"
    )
    parser.add_argument("--max-listed", type=int, default=50, help="rows per list (default 50)")
    parser.add_argument(
        "--missing-baseline-ok", action="store_true", help="exit 0 when there is no baseline"
    )
    parser.add_argument(
        "--fail-on-new-failures", action="store_true", help="exit 1 when there are new failures"
    )


def run(args: argparse.Namespace) -> int:
    current = load_side(args.current)
    if current is None:
        raise CIError("no current results in " + ", ".join(args.current))
    baseline = load_side(args.baseline)
    if baseline is None and not args.missing_baseline_ok:
        raise CIError(
            "no baseline results in " + ", ".join(args.baseline) + " (use --missing-baseline-ok)"
        )
    diff = compare(current, baseline) if baseline is not None else None
    markdown = render_markdown(diff, args.label, args.max_listed)
    payload = (
        diff
        if diff is not None
        else {
            "baseline": None,
            "pass_counts": pass_counts(current, None),
            "flaky": flaky_cases(current),
            "not_judged": not_judged_cases(current),
        }
    )
    write_report(payload, markdown, args.output, args.markdown, args.summary)
    if diff is not None and args.fail_on_new_failures and diff["new_failures"]:
        return 1
    return 0
