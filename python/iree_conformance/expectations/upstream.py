"""Agreement with IREE's own ONNX operator test CI.

IREE's CI runs the ONNX backend operator tests from iree-test-suites with a JSON config
per lane (JSON with ``//`` comments): ``expected_compile_failures``,
``expected_run_failures``, ``skip_compile_tests`` and ``skip_run_tests`` list test paths
such as ``onnx/node/generated/test_abs``; every other test of theirs is expected to pass.
This module maps those paths to our case ids (``onnx-ops/test_abs``), lines them up
with our verdicts (a results JSON, or our manifest), and sorts every disagreement into
categories with its explanation, so that "we fail, IREE's CI passes" is a short list
with a reason per line, never a surprise.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from iree_conformance.common.diagnostics import normalize
from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.markdown_escape import md_text
from iree_conformance.common.tomlio import TomlError, load_toml
from iree_conformance.common.vocabulary import Status
from iree_conformance.expectations.manifest import read_manifest

CASE_PREFIX = "onnx-ops/"
_PATH = re.compile(r"^onnx/node/[^/]+/(test_[^/]+)$")


class UpstreamError(ConfigurationError):
    """The config or the notes cannot be read; the message names the source."""


def _strip_jsonc(text: str) -> str:
    """JSON with // and /* */ comments and trailing commas, as iree-test-suites writes it, to JSON."""
    out, i, n, in_string = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[\]}])", r"\1", "".join(out))


def read_text(source: str, what: str, timeout: float = 30.0) -> str:
    """A file's text, or an http(s) URL's; errors name the source and what it was for."""
    if re.match(r"^https?://", source):
        import requests

        try:
            response = requests.get(source, timeout=timeout)
            response.raise_for_status()
        except requests.RequestException as e:
            raise UpstreamError(
                f"{source}: cannot download the {what} ({e}); pass a local copy instead"
            ) from None
        return response.text
    try:
        return Path(source).read_text(encoding="utf-8")
    except OSError as e:
        raise UpstreamError(f"{source}: cannot read the {what} ({e.strerror or e})") from None


def load_test_list(source: str) -> set[str]:
    """IREE CI's tests as case ids, from a list of paths or bare test names (file or URL)."""
    names = read_text(source, "test list").split()
    return {case_id_of(n) or CASE_PREFIX + n.rsplit("/", 1)[-1] for n in names}


def load_config(source: str, timeout: float = 30.0) -> dict[str, Any]:
    """A config from a file path or an http(s) URL."""
    text = read_text(source, "config", timeout)
    try:
        data = json.loads(_strip_jsonc(text))
    except json.JSONDecodeError as e:
        raise UpstreamError(
            f"{source}:{e.lineno}: not an iree-test-suites config: {e.msg}"
        ) from None
    if not isinstance(data, dict) or not any(
        k in data for k in ("expected_compile_failures", "expected_run_failures")
    ):
        raise UpstreamError(
            f"{source}: not an iree-test-suites config (no expected_compile_failures / expected_run_failures)"
        )
    return data


def case_id_of(path: str) -> str | None:
    """``onnx/node/generated/test_abs`` -> ``onnx-ops/test_abs``; None for other paths."""
    m = _PATH.match(path.strip().rstrip("/"))
    return CASE_PREFIX + m.group(1) if m else None


@dataclasses.dataclass
class UpstreamView:
    """IREE CI's expectation per case: fail-compile, fail-run, or skip; pass when unlisted."""

    expected: dict[str, str]
    skipped: set[str]
    unmapped: list[str]
    flags: list[str]

    def kind(self, case_id: str) -> str:
        return self.expected.get(case_id, "pass")


def upstream_view(config: dict[str, Any]) -> UpstreamView:
    expected: dict[str, str] = {}
    skipped: set[str] = set()
    unmapped: list[str] = []
    for key, kind in (
        ("expected_compile_failures", "fail-compile"),
        ("expected_run_failures", "fail-run"),
        ("skip_compile_tests", "skip"),
        ("skip_run_tests", "skip"),
    ):
        for path in config.get(key, []) or []:
            case_id = case_id_of(path)
            if case_id is None:
                unmapped.append(path)
            elif kind == "skip":
                skipped.add(case_id)
            else:
                expected[case_id] = kind
    return UpstreamView(expected, skipped, unmapped, list(config.get("iree_compile_flags", [])))


@dataclasses.dataclass
class Ours:
    """Our result per case: its observed kind ("pass", "fail-compile", ...) and first line."""

    kinds: dict[str, str]
    lines: dict[str, str]
    source: str


def ours_from_results(
    data: dict[str, Any], target: str, source: str = "results", os_name: str | None = None
) -> Ours:
    """Our results for target; os_name keeps one OS of a merged results file."""
    from iree_conformance.model.outcome import Outcome

    kinds, lines = {}, {}
    for o in data.get("outcomes", []):
        if o.get("suite") != "onnx_ops" or o.get("target") != target or o.get("status") == "skip":
            continue
        if os_name and o.get("os", data.get("metadata", {}).get("os")) != os_name:
            continue
        outcome = Outcome.from_json(o)
        kinds[outcome.case_id] = outcome.observed
        lines[outcome.case_id] = outcome.diagnostics[0] if outcome.diagnostics else ""
    return Ours(kinds, lines, source)


def ours_from_manifest(case_ids: list[str], manifest: Path) -> Ours:
    """Our expected result per case from a manifest: listed -> its kind, else pass."""
    try:
        xfail = read_manifest(manifest).table("xfail")
    except TomlError as e:
        raise UpstreamError(str(e)) from None
    kinds, lines = {}, {}
    for case_id in case_ids:
        entry = xfail.get(case_id)
        stage = entry.get("stage") if entry else Status.PASS
        kinds[case_id] = "|".join(stage) if isinstance(stage, list) else stage
        lines[case_id] = entry.get("reason", "") if entry else ""
    return Ours(kinds, lines, str(manifest))


def load_notes(path: Path | None) -> dict[str, dict[str, str]]:
    """Explanations of disagreements: ``[notes] "onnx-ops/x" = { why = "version", text = "..." }``."""
    if path is None or not path.exists():
        return {}
    try:
        notes = load_toml(path).get("notes", {})
    except TomlError as e:
        raise UpstreamError(str(e)) from None
    for case_id, note in notes.items():
        if not isinstance(note, dict) or not note.get("why") or not note.get("text"):
            raise UpstreamError(
                f"{path}: note for {case_id!r} needs why (version, flag, tolerance, harness, ...) and text"
            )
    return notes


def _fails(kind: str) -> bool:
    return kind != "pass" and "pass" not in kind.split("|")


@dataclasses.dataclass
class Agreement:
    both_fail: list[str]
    both_pass: list[str]
    we_fail_they_pass: list[str]
    they_fail_we_pass: list[str]
    flaky_here: list[str]
    beyond: list[str]  # our cases that IREE's CI does not have (needs their test list)
    assumed_universe: bool

    def table(self) -> dict[str, int]:
        return {
            "fail in both": len(self.both_fail),
            "pass in both": len(self.both_pass),
            "we fail, IREE's CI passes": len(self.we_fail_they_pass),
            "IREE's CI fails, we pass": len(self.they_fail_we_pass),
        }


def agree(ours: Ours, upstream: UpstreamView, upstream_tests: set[str] | None) -> Agreement:
    universe = upstream_tests if upstream_tests is not None else set(ours.kinds)
    both = sorted((set(ours.kinds) & universe) - upstream.skipped)
    result = Agreement(
        [], [], [], [], [], sorted(set(ours.kinds) - universe), upstream_tests is None
    )
    for case_id in both:
        mine, theirs = ours.kinds[case_id], upstream.kind(case_id)
        if "|" in mine:
            result.flaky_here.append(case_id)
        elif _fails(mine) and theirs != "pass":
            result.both_fail.append(case_id)
        elif not _fails(mine) and theirs == "pass":
            result.both_pass.append(case_id)
        elif _fails(mine):
            result.we_fail_they_pass.append(case_id)
        else:
            result.they_fail_we_pass.append(case_id)
    return result


def explain(case_id: str, ours: Ours, notes: dict[str, dict[str, str]]) -> tuple[str, str]:
    """(why, text): a note when there is one, else our own first line (the manifest reason)."""
    note = notes.get(case_id)
    if note:
        return note["why"], note["text"]
    return "", ours.lines.get(case_id, "")


def categories(
    cases: list[str], ours: Ours, upstream: UpstreamView, notes: dict[str, dict[str, str]]
) -> list[dict[str, Any]]:
    """Disagreements grouped by (our kind, IREE CI's kind, why, normalized first line)."""
    groups: dict[tuple[str, str, str, str], list[str]] = collections.defaultdict(list)
    for case_id in cases:
        why, text = explain(case_id, ours, notes)
        line = text if why else normalize(text) if text else ""  # a note is shown as written
        groups[(ours.kinds[case_id], upstream.kind(case_id), why, line)].append(case_id)
    rows = [
        {"ours": k[0], "iree_ci": k[1], "why": k[2], "line": k[3], "count": len(v), "cases": v}
        for k, v in groups.items()
    ]
    return sorted(rows, key=lambda r: (-r["count"], r["ours"], r["line"]))


def stage_rates(case_ids: list[str], ours: Ours) -> dict[str, float]:
    """Share of the cases that get past each stage (import, compile, run, numerics)."""
    order = [
        ("import", ("fail-prepare", "fail-import")),
        ("compile", ("fail-compile",)),
        ("run", ("fail-run", "crash", "timeout")),
        ("numerics", ("fail-numerics", "fail-reference")),
    ]
    remaining = [ours.kinds[c] for c in case_ids]
    total = len(remaining) or 1
    rates: dict[str, float] = {}
    failed: set[str] = set()
    for stage, kinds in order:
        failed |= set(kinds)
        rates[stage] = round(100.0 * sum(1 for k in remaining if k not in failed) / total, 1)
    return rates


def report(
    ours: Ours, upstream: UpstreamView, result: Agreement, notes: dict[str, dict[str, str]]
) -> dict[str, Any]:
    unexplained = [
        c
        for c in result.we_fail_they_pass + result.they_fail_we_pass
        if not explain(c, ours, notes)[1]
    ]
    return {
        "ours_from": ours.source,
        "iree_ci_flags": upstream.flags,
        "assumed_universe": result.assumed_universe,
        "table": result.table(),
        "flaky_here": result.flaky_here,
        "we_fail_they_pass": categories(result.we_fail_they_pass, ours, upstream, notes),
        "they_fail_we_pass": categories(result.they_fail_we_pass, ours, upstream, notes),
        "unexplained": unexplained,
        "unmapped_upstream_paths": upstream.unmapped,
        "beyond_iree_ci": {
            "cases": len(result.beyond),
            "stage_pass_rates": stage_rates(result.beyond, ours) if result.beyond else {},
        },
    }


def render(data: dict[str, Any]) -> str:
    t = data["table"]
    lines = [
        "## Agreement with IREE's ONNX operator test CI",
        "",
        f"Our verdicts from `{data['ours_from']}`; IREE CI's flags: `{' '.join(data['iree_ci_flags'])}`.",
        "",
    ]
    if data["assumed_universe"]:
        lines += [
            "(No list of IREE CI's tests given: every one of our operator tests is assumed to exist there.)",
            "",
        ]
    they_fail, we_fail = t["IREE's CI fails, we pass"], t["we fail, IREE's CI passes"]
    lines += [
        "| | IREE CI passes | IREE CI fails |",
        "|---|---:|---:|",
        f"| **we pass** | {t['pass in both']} | {they_fail} |",
        f"| **we fail** | {we_fail} | {t['fail in both']} |",
        "",
    ]
    for title, key in (
        ("We fail, IREE's CI passes", "we_fail_they_pass"),
        ("IREE's CI fails, we pass", "they_fail_we_pass"),
    ):
        rows = data[key]
        lines += [f"### {title} ({sum(r['count'] for r in rows)})", ""]
        if rows:
            lines += [
                "| ours | IREE CI | why | first line / explanation | count | cases |",
                "|---|---|---|---|---:|---|",
            ]
            for r in rows:
                shown = ", ".join(c.removeprefix(CASE_PREFIX) for c in r["cases"][:4]) + (
                    " ..." if r["count"] > 4 else ""
                )
                lines.append(
                    f"| {md_text(r['ours'])} | {md_text(r['iree_ci'])} | {md_text(r['why'] or '-')} | "
                    f"{md_text(r['line'].replace('|', '/') or '(unexplained)')} | {r['count']} | {md_text(shown)} |"
                )
            lines.append("")
    if data["flaky_here"]:
        lines += [
            f"Declared flaky here (not counted): {md_text(', '.join(data['flaky_here']))}",
            "",
        ]
    if data["unexplained"]:
        lines += [
            f"**Unexplained disagreements: {len(data['unexplained'])}**: {md_text(', '.join(data['unexplained']))}",
            "",
        ]
    beyond = data["beyond_iree_ci"]
    if beyond["cases"]:
        rates = ", ".join(f"{k} {v} %" for k, v in beyond["stage_pass_rates"].items())
        lines += [
            f"Beyond IREE's CI: {beyond['cases']} operator tests it does not have; past each stage: {rates}.",
            "",
        ]
    if data["unmapped_upstream_paths"]:
        lines += [
            f"Upstream paths not mapped to a case: {len(data['unmapped_upstream_paths'])}",
            "",
        ]
    return "\n".join(lines)
