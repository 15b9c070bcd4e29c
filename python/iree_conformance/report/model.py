"""One report model: every section of a run's report, computed once as typed data.

The Markdown report (``report.py``), the HTML report (``html/``) and the CI merge tables
(``ci/merge_results.py``) all render a ``ReportModel``, so they agree on every count.
Build it with ``build`` from a merged document (``merging.merge_documents``) or with
``from_document`` from one results file as ``results.load_results`` returns it.

Definitions (one each):

- an outcome's verdict column is its ``verdict`` (else its ``status``); the known verdicts
  come first, then any other value found;
- a *failure* is an outcome whose status is neither ``pass`` nor ``skip`` (IREE did not
  get the case right, whatever the manifest expected); failures are grouped by stage and
  normalized first error line, and a group counts how many of them were *unexpected*;
- a *not judged* outcome is one the harness could not judge (``Outcome.not_judged``: an
  error at ``reference``, skipped with "not judged: ..."): its own column and section,
  never a failure, never in the funnel (which counts only the stages IREE ran);
- an *unexpected result* is a red verdict (``fail``, ``xpass``);
- a case run more than once on the same OS, architecture, Python and target counts once:
  the outcome of the latest-started run is kept.

Standard library only: ``ci/merge_results.py`` imports it from the source tree before the
project is installed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from iree_conformance.common.diagnostics import normalize
from iree_conformance.common.vocabulary import RED_VERDICTS, VERDICTS, Status, Verdict
from iree_conformance.expectations.known_issues import (
    KnownIssues,
    default_path,
    issue_of,
    load_known_issues,
)
from iree_conformance.model.outcome import NOT_JUDGED, Outcome, not_judged
from iree_conformance.model.results import MERGED_KIND
from iree_conformance.report.merging import merge_documents, python_minor, suite_of

#: The funnel's steps and the failing stages that stop a case before passing each.
FUNNEL: tuple[tuple[str, frozenset[str]], ...] = (
    ("import", frozenset({"prepare", "import"})),
    ("compile", frozenset({"compile"})),
    ("run", frozenset({"load", "run"})),
    ("numerics", frozenset({"reference", "compare"})),
)
FUNNEL_STEPS: tuple[str, ...] = tuple(step for step, _ in FUNNEL)
#: The suite of the row an empty run (a shard with no outcomes) gets per target.
NO_SUITE = "(none)"
#: Worst first: the verdict a (case, target) cell of ``by_target`` shows when platforms disagree.
SEVERITY = ("fail", "xpass", "flaky", "xfail", "skip", "pass")
#: Dropped from a repeated key: the fields that name one case on one platform and target.
REPEAT_KEY = ("os", "arch", "python", "target", "case_id")

Record = dict[str, Any]


def verdict_of(outcome: Record) -> str:
    """The outcome's column: "not judged", else its verdict, else its status ("?" when it
    has neither)."""
    if is_not_judged(outcome):
        return NOT_JUDGED
    return str(outcome.get("verdict") or outcome.get("status") or "?")


def is_not_judged(outcome: Record) -> bool:
    """The harness could not judge the case (skipped so: ``Outcome.not_judged``)."""
    return outcome.get("verdict") in (Verdict.SKIP, None) and not_judged(
        outcome.get("status"), outcome.get("stage")
    )


def mostly_not_judged(outcomes: list[Record]) -> bool:
    """Over half of the outcomes that were not skipped for another reason are not judged:
    the run says little about IREE, and its report says so first."""
    ran = [o for o in outcomes if o.get("status") != Status.SKIP]
    return bool(ran) and 2 * sum(map(is_not_judged, ran)) > len(ran)


def platform_of(outcome: Record) -> str:
    """'linux/x86_64 py3.11': two Pythons on one OS stay apart."""
    return f"{outcome.get('os', '?')}/{outcome.get('arch', '?')} py{outcome.get('python', '?')}"


def is_failure(outcome: Record) -> bool:
    """IREE did not get the case right (whatever the manifest expected); a case the
    harness could not judge is not IREE's failure."""
    return outcome.get("status") not in (Status.PASS, Status.SKIP) and not is_not_judged(outcome)


def is_unexpected(outcome: Record) -> bool:
    """A red verdict: an unexpected failure or a strict xpass."""
    return outcome.get("verdict") in RED_VERDICTS


def observed(outcome: Record) -> str:
    """What the outcome counts as in a manifest: "pass" or its failure kind (``Outcome.observed``)."""
    return Outcome.from_json({**outcome, "suite": suite_of(outcome)}).observed


def first_line(outcome: Record) -> str:
    """The first non-empty diagnostic line, else the reason."""
    return next(
        (d for d in outcome.get("diagnostics") or [] if d.strip()), outcome.get("reason") or ""
    )


@dataclass
class CountRow:
    """Verdict counts of one suite x target x platform (OS/arch and Python minor)."""

    suite: str
    target: str
    os_arch: str
    python: str
    counts: Counter = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def platform(self) -> str:
        return f"{self.os_arch} py{self.python}"


@dataclass
class FailureGroup:
    """Failures that share a stage and a normalized first error line."""

    stage: str
    line: str
    members: list[Record]
    issue: str | None = None  # the upstream issue of the signature (known_issues.py)

    @property
    def unexpected(self) -> int:
        return sum(is_unexpected(o) for o in self.members)

    @property
    def cases(self) -> list[str]:
        return sorted({str(o["case_id"]) for o in self.members})

    @property
    def where(self) -> list[str]:
        return sorted({f"{o.get('target')} {platform_of(o)}" for o in self.members})


@dataclass
class Funnel:
    """How many runnable (not skipped) cases of one suite x target got through each step."""

    suite: str
    target: str
    runnable: int
    passed: dict[str, int]

    def rate(self, step: str) -> float:
        return self.passed[step] / self.runnable if self.runnable else 0.0


@dataclass(frozen=True)
class FlakyCase:
    """A flaky verdict and what its tries were ("crash then pass"), or its listed kinds."""

    case_id: str
    target: str
    platform: str
    seen: str


@dataclass(frozen=True)
class Differs:
    """A case whose result (pass, or its failure kind) is not the same on every target."""

    case_id: str
    by_target: dict[str, str]


@dataclass
class ByTarget:
    """Per case, the worst verdict on each target (all platforms folded); only the cases
    that do not pass on every target are listed. Empty with fewer than two targets."""

    targets: list[str]
    case_count: int
    rows: list[tuple[str, dict[str, str]]]


@dataclass
class ReportModel:
    """The sections of one run's report (see the module docstring for the definitions)."""

    runs: list[Record]
    outcomes: list[Record]
    repeats_dropped: int
    columns: list[str]
    counts: list[CountRow]
    unexpected: list[Record]
    not_judged: list[Record]
    prepared: list[Record]  # users' programs the harness took steps beyond (info.preparation)
    failure_groups: list[FailureGroup]
    expected_failures: list[tuple[str, int]]
    flaky: list[FlakyCase]
    targets: list[str]
    differs: list[Differs]
    by_target: ByTarget
    funnels: list[Funnel]
    slowest: list[Record]
    timing: list[Record]

    @property
    def totals(self) -> Counter:
        return sum((r.counts for r in self.counts), start=Counter())

    @property
    def failure_count(self) -> int:
        return sum(len(g.members) for g in self.failure_groups)

    @property
    def metadata(self) -> Record:
        """The latest run's metadata (a results file's own)."""
        return (self.runs[-1].get("metadata") or {}) if self.runs else {}

    def by_suite_target(self) -> list[tuple[str, str, Counter]]:
        """The counts with the platforms folded, sorted by suite and target."""
        table: dict[tuple[str, str], Counter] = {}
        for r in self.counts:
            table.setdefault((r.suite, r.target), Counter()).update(r.counts)
        return [(s, t, table[(s, t)]) for s, t in sorted(table)]


def drop_repeats(merged: Record) -> tuple[list[Record], int]:
    """The merged outcomes with each repeated key kept once (the latest-started run's)."""
    runs = merged.get("runs") or []
    starts = [str((r.get("metadata") or {}).get("started") or "") for r in runs]

    def start(o: Record) -> str:
        run = o.get("run")
        return starts[run] if isinstance(run, int) and 0 <= run < len(starts) else ""

    latest: dict[tuple[str, ...], Record] = {}
    for o in merged["outcomes"]:
        key = tuple(str(o.get(k)) for k in REPEAT_KEY)
        old = latest.get(key)
        if old is None or start(o) >= start(old):
            latest[key] = o
    return list(latest.values()), len(merged["outcomes"]) - len(latest)


def _columns(outcomes: list[Record]) -> list[str]:
    unknown = sorted({verdict_of(o) for o in outcomes} - set(VERDICTS))
    return [*(str(v) for v in VERDICTS), *unknown]


def _counts(runs: list[Record], outcomes: list[Record]) -> list[CountRow]:
    rows: dict[tuple[str, str, str, str], CountRow] = {}
    for run in runs:  # an empty run (a shard with no outcomes) still gets a row per target
        if not run.get("outcome_count"):
            for target in run.get("targets") or ["?"]:
                key = (
                    NO_SUITE,
                    str(target),
                    f"{run.get('os', '?')}/{run.get('arch', '?')}",
                    python_minor(run.get("python")),
                )
                rows.setdefault(key, CountRow(*key))
    for o in outcomes:
        key = (
            suite_of(o),
            str(o.get("target", "?")),
            f"{o.get('os', '?')}/{o.get('arch', '?')}",
            str(o.get("python", "?")),
        )
        rows.setdefault(key, CountRow(*key)).counts[verdict_of(o)] += 1
    return [rows[k] for k in sorted(rows)]


def failure_groups(outcomes: list[Record], known: KnownIssues | None = None) -> list[FailureGroup]:
    """Failures by (stage, normalized first line), unexpected first, then the biggest; a
    group's issue is a member's manifest issue, else the known issue of its signature."""
    known = known if known is not None else KnownIssues()
    groups: dict[tuple[str, str], list[Record]] = {}
    issues: dict[tuple[str, str], str] = {}
    for o in outcomes:
        if is_failure(o):
            line = first_line(o)
            key = (str(o.get("stage", "?")), normalize(line) if line else "(no diagnostic)")
            groups.setdefault(key, []).append(o)
            issue = issue_of(o, known, line)
            if issue and key not in issues:
                issues[key] = issue
    found = [
        FailureGroup(stage, line, members, issues.get((stage, line)))
        for (stage, line), members in groups.items()
    ]
    return sorted(found, key=lambda g: (-g.unexpected, -len(g.members), g.stage, g.line))


def _steps_passed(outcome: Record) -> dict[str, bool]:
    if outcome.get("status") == Status.PASS:
        return {step: True for step in FUNNEL_STEPS}
    stage = outcome.get("stage")
    if not any(stage in stages for _, stages in FUNNEL):
        return {step: False for step in FUNNEL_STEPS}  # unknown stage: stopped first
    result, stopped = {}, False
    for step, stages in FUNNEL:
        stopped = stopped or stage in stages or step == "numerics"
        result[step] = not stopped
    return result


def funnels(outcomes: list[Record]) -> list[Funnel]:
    """One funnel per suite x target (all platforms together), sorted."""
    table: dict[tuple[str, str], Funnel] = {}
    for o in outcomes:
        if o.get("status") == Status.SKIP or is_not_judged(o):
            continue  # only the stages IREE ran, of the cases judged
        key = (suite_of(o), str(o.get("target", "?")))
        f = table.setdefault(key, Funnel(*key, 0, {step: 0 for step in FUNNEL_STEPS}))
        f.runnable += 1
        for step, ok in _steps_passed(o).items():
            f.passed[step] += ok
    return [table[k] for k in sorted(table)]


def _flaky(outcomes: list[Record]) -> list[FlakyCase]:
    found = []
    for o in outcomes:
        if o.get("verdict") != "flaky":
            continue
        attempts = o.get("attempts") or []
        seen = (
            " then ".join([str(a.get("kind", "?")) for a in attempts] + [str(o.get("status", "?"))])
            if attempts
            else str(o.get("expected") or "")
        )
        found.append(FlakyCase(str(o["case_id"]), str(o["target"]), platform_of(o), seen))
    return sorted(found, key=lambda f: (f.case_id, f.target, f.platform))


def differs_across_targets(outcomes: list[Record]) -> list[Differs]:
    """Cases whose result (pass, or the failure kind) differs between the targets that ran
    them (skips left out; the last outcome per case and target when platforms repeat it)."""
    by_case: dict[str, dict[str, str]] = {}
    for o in outcomes:
        if o.get("status") == Status.SKIP or is_not_judged(o):
            continue
        by_case.setdefault(str(o["case_id"]), {})[str(o["target"])] = observed(o)
    return [
        Differs(case_id, dict(sorted(seen.items())))
        for case_id, seen in sorted(by_case.items())
        if len(seen) > 1 and len(set(seen.values())) > 1
    ]


def _by_target(outcomes: list[Record]) -> ByTarget:
    targets = sorted({str(o["target"]) for o in outcomes})
    cells: dict[str, dict[str, str]] = {}
    for o in outcomes:
        verdict = str(o.get("verdict")) if o.get("verdict") in SEVERITY else Verdict.FAIL
        row = cells.setdefault(str(o["case_id"]), {})
        old = row.get(str(o["target"]))
        if old is None or SEVERITY.index(verdict) < SEVERITY.index(old):
            row[str(o["target"])] = verdict
    if len(targets) < 2:
        return ByTarget(targets, len(cells), [])
    listed = sorted(
        case
        for case, row in cells.items()
        if any(v != "pass" for v in row.values()) or len(row) < len(targets)
    )
    return ByTarget(targets, len(cells), [(case, cells[case]) for case in listed])


def build(merged: Record, slowest: int = 10, known: KnownIssues | None = None) -> ReportModel:
    """The model of a merged document (``merging.merge_documents``; repeats dropped here);
    ``known``: the known issues (default conformance/known_issues.toml)."""
    if known is None:
        known = load_known_issues(default_path())
    outcomes, dropped = drop_repeats(merged)
    dropped += int(merged.get("repeats_dropped") or 0)  # dropped already (html.inputs)
    runs = list(merged.get("runs") or [])
    xfails = Counter(str(o.get("expected") or "?") for o in outcomes if o.get("verdict") == "xfail")
    return ReportModel(
        runs=runs,
        outcomes=outcomes,
        repeats_dropped=dropped,
        columns=_columns(outcomes),
        counts=_counts(runs, outcomes),
        unexpected=sorted(
            (o for o in outcomes if is_unexpected(o)),
            key=lambda o: (
                str(o.get("os")),
                str(o.get("python")),
                str(o["target"]),
                str(o["case_id"]),
            ),
        ),
        not_judged=sorted(
            (o for o in outcomes if is_not_judged(o)),
            key=lambda o: (str(o["case_id"]), str(o["target"])),
        ),
        prepared=sorted(
            (o for o in outcomes if (o.get("info") or {}).get("preparation")),
            key=lambda o: (str(o["case_id"]), str(o["target"])),
        ),
        failure_groups=failure_groups(outcomes, known),
        expected_failures=sorted(xfails.items()),
        flaky=_flaky(outcomes),
        targets=sorted({str(o["target"]) for o in outcomes}),
        differs=differs_across_targets(outcomes),
        by_target=_by_target(outcomes),
        funnels=funnels(outcomes),
        slowest=sorted(outcomes, key=lambda o: -float(o.get("duration") or 0.0))[:slowest],
        timing=sorted(
            (o for o in outcomes if (o.get("metrics") or {}).get("timing")),
            key=lambda o: (str(o["case_id"]), str(o["target"])),
        ),
    )


def from_document(data: Record, slowest: int = 10, source: str = "results") -> ReportModel:
    """The model of one results file or merged file (as ``results.load_results`` reads it)."""
    merged = data if data.get("kind") == MERGED_KIND else merge_documents([(source, data)])
    return build(merged, slowest)
