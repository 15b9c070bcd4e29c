"""Results JSON (all Outcomes plus run metadata) and the Markdown rendering of the report model."""

from __future__ import annotations

import datetime
import json
import platform
import re
from pathlib import Path
from typing import Any

from iree_conformance.common import ghactions
from iree_conformance.common.dist_versions import dist_version
from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.common.platform_info import cpu_fingerprint, host_arch, host_cpu, host_os
from iree_conformance.model.preparation import bare_defaults_line
from iree_conformance.model.results import (  # noqa: F401 - the schema's names, re-exported
    SCHEMA,
    VERDICTS,
    ResultsError,
    load_results,
    results_document,
)
from iree_conformance.report import model as report_model
from iree_conformance.report.model import ReportModel
from iree_conformance.report.speed import markdown_speed_section
from iree_conformance.report.tables import capped_lines, funnel_table, md_code, md_text

#: The results file's errors (the name the reports and the CLI have always used).
ReportError = ResultsError


def _iree_revision() -> str | None:
    # imported here: the results jobs render reports without packaging (iree_index needs it)
    from iree_conformance.common.iree_index import installed_revision

    return installed_revision()


def run_metadata(targets: list[str], started: datetime.datetime, argv: list[str]) -> dict[str, Any]:
    return {
        "iree_compiler": dist_version("iree-base-compiler"),
        "iree_runtime": dist_version("iree-base-runtime"),
        "iree_revision": _iree_revision(),
        "onnx": dist_version("onnx"),
        "onnxruntime": dist_version("onnxruntime"),
        "jax": dist_version("jax"),
        "jaxlib": dist_version("jaxlib"),
        "flax": dist_version("flax"),
        "iree_conformance": dist_version("iree-conformance"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "os": host_os(),
        "arch": host_arch(),
        "cpu": host_cpu(),
        "cpu_fingerprint": cpu_fingerprint(),
        "targets": targets,
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "argv": [redact_url_secrets(a) for a in argv],
    }


def redact_url_secrets(text: str) -> str:
    """Drops user:password@ and query strings from URLs (a mirror URL may carry a token)."""
    text = re.sub(r"(https?://)[^/@\s]+@", r"\1***@", text)
    return re.sub(r"(https?://[^\s?]+)\?\S*", r"\1?***", text)


def write_results(path: Path, metadata: dict[str, Any], outcomes: list[dict[str, Any]]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = results_document(metadata, outcomes)
    atomic_write_text(path, json.dumps(data, indent=1, default=str))


def render_markdown(data: dict[str, Any], slowest: int = 10) -> str:
    """The Markdown report of a results (or merged) document."""
    return markdown_of(report_model.from_document(data, slowest))


def _more(left_out: int) -> str:
    return f"- …and {left_out} more"


def _unexpected_line(o: dict[str, Any]) -> str:
    expected = f", expected {o['expected']}" if o.get("expected") else ""
    return (
        f"- {md_code(o['case_id'])} ({md_text(o['target'])}): {md_text(o['verdict'])}, "
        f"{md_text(o.get('status'))} at {md_text(o.get('stage'))}{md_text(expected)}"
    )


def _group_line(g: report_model.FailureGroup) -> str:
    ids = ", ".join(
        f"{md_code(m['case_id'])} ({md_text(m['target'])}{md_text(_inputs_note(m))})"
        for m in g.members[:10]
    )
    more = f" and {len(g.members) - 10} more" if len(g.members) > 10 else ""
    return (
        f"- **{md_text(g.stage)}** x{len(g.members)} ({g.unexpected} unexpected): "
        f"{md_code(g.line)}{_issue_note(g.issue)}: {ids}{more}"
    )


def markdown_of(model: ReportModel, max_listed: int = 50, max_groups: int = 60) -> str:
    """The Markdown rendering of the report model (the HTML and the CI tables render the same one)."""
    meta = model.metadata
    lines = ["## IREE conformance results", ""]
    m = {k: md_text(str(v)) for k, v in meta.items() if not isinstance(v, (dict, list))}
    lines.append(
        f"IREE compiler {m.get('iree_compiler')}, runtime {m.get('iree_runtime')}; onnx {m.get('onnx')}, "
        f"onnxruntime {m.get('onnxruntime')}; Python {m.get('python')} on {m.get('os')}/{m.get('arch')} "
        f"({m.get('platform')}); started {m.get('started')}, finished {m.get('finished')}."
    )
    if report_model.mostly_not_judged(model.outcomes):
        lines += ["", not_judged_warning(model)]
    columns = model.columns
    lines += [
        "",
        "| suite | target | " + " | ".join(columns) + " | total |",
        "|---|---|" + "---:|" * (len(columns) + 1),
    ]
    for suite, target, c in model.by_suite_target():
        lines.append(
            f"| {md_text(suite)} | {md_text(target)} | "
            + " | ".join(str(c[v]) for v in columns)
            + f" | {sum(c.values())} |"
        )
    if model.unexpected:
        lines += ["", f"### Unexpected results ({len(model.unexpected)})", ""]
        lines += capped_lines(model.unexpected, max_listed, _unexpected_line, _more)
    lines += not_judged_lines(model, max_listed)
    groups = model.failure_groups
    if groups:
        unexpected = sum(g.unexpected for g in groups)
        lines += [
            "",
            f"### Failure groups ({model.failure_count} failing outcomes in {len(groups)} groups, {unexpected} unexpected)",
            "",
        ]
        lines += capped_lines(groups, max_groups, _group_line, lambda n: f"- …and {n} more groups")
    lines += opset_conversion_lines(model.outcomes, max_listed)
    lines += preparation_lines(model.prepared, max_listed)
    if model.flaky:
        lines += ["", f"### Flaky ({len(model.flaky)}): never red, never counted as a pass", ""]
        lines += [
            f"- {md_code(f.case_id)} ({md_text(f.target)}): {md_text(f.seen)}" for f in model.flaky
        ]
    if model.differs:
        targets = model.targets
        lines += [
            "",
            f"### Differs across targets ({len(model.differs)})",
            "",
            "| case | " + " | ".join(md_text(t) for t in targets) + " |",
            "|---|" + "---|" * len(targets),
        ]
        for d in model.differs:
            lines.append(
                f"| {md_code(d.case_id)} | "
                + " | ".join(md_text(d.by_target.get(t, "-")) for t in targets)
                + " |"
            )
    if model.expected_failures:
        lines += ["", "### Expected failures by stage", ""]
        lines += [f"- {md_text(kind)}: {n}" for kind, n in model.expected_failures]
    lines += funnel_table(model, "Stage funnel (runnable cases that got through each stage)")
    speed_section = markdown_speed_section(model.timing)
    lines += speed_section
    if model.timing and not speed_section:
        lines += [
            "",
            "### Timing (informative, not pass/fail)",
            "",
            "median of N calls after a warm-up; inputs already on the device",
            "",
            "| case | target | IREE ms | upload ms | onnxruntime ms |",
            "|---|---|---:|---:|---:|",
        ]
        for o in model.timing:
            t = o["metrics"]["timing"]
            ort = t.get("onnxruntime_median_s")
            lines.append(
                f"| {md_code(o['case_id'])} | {md_text(o['target'])} | {t['iree_median_s'] * 1e3:.3f} | {t.get('iree_upload_median_s', 0.0) * 1e3:.3f} | "
                + (f"{ort * 1e3:.3f} |" if ort is not None else "- |")
            )
    if model.slowest:
        lines += [
            "",
            f"### Slowest {len(model.slowest)} cases",
            "",
            "| case | target | seconds | compile s |",
            "|---|---|---:|---:|",
        ]
        for o in model.slowest:
            lines.append(
                f"| {md_code(o['case_id'])} | {md_text(o['target'])} | {o.get('duration', 0.0):.2f} | {(o.get('stage_times') or {}).get('compile', 0.0):.2f} |"
            )
    return "\n".join(lines) + "\n"


def not_judged_warning(model: ReportModel) -> str:
    """The loud line of a run whose cases are mostly not judged."""
    ran = sum(1 for o in model.outcomes if o.get("status") != "skip")
    return (
        f"**Most cases were not judged ({len(model.not_judged)} of {ran}): this run says "
        "little about IREE.** Give their inputs (see the section below)."
    )


def not_judged_lines(model: ReportModel, max_listed: int = 50) -> list[str]:
    """The cases the harness could not judge: neither IREE's failures nor passes."""
    if not model.not_judged:
        return []
    lines = [
        "",
        f"### Not judged ({len(model.not_judged)}): neither IREE's failure nor a pass",
        "",
    ]
    return lines + capped_lines(model.not_judged, max_listed, _not_judged_line, _more)


def _not_judged_line(o: dict[str, Any]) -> str:
    line = report_model.first_line(o)
    return f"- {md_code(o['case_id'])} ({md_text(o['target'])}): {md_text(line)}"


def opset_conversion_lines(outcomes: list[dict[str, Any]], max_listed: int = 50) -> list[str]:
    """The models upgraded to a newer opset before import (``info.opset_from``/``opset_to``),
    with the ``iree-import-onnx`` option that does the same: a deployment needs it too."""
    converted = [
        o
        for o in outcomes
        if (info := o.get("info") or {}).get("opset_from") is not None
        and info.get("opset_to") not in (None, info.get("opset_from"))
    ]
    if not converted:
        return []
    needed = [o for o in converted if bare_defaults_line(o["info"])]
    lines = [
        "",
        f"### Converted to a newer opset before import ({len(converted)}; "
        f"{len(needed)} fail without it)",
        "",
        "IREE imported the converted model, as IREE's documented flow does "
        "(`iree-import-onnx MODEL --opset-version N`). Where IREE's tools at their defaults "
        "fail the model as given, the line says so: an IREE bug worth a report.",
        "",
    ]
    return lines + capped_lines(converted, max_listed, _converted_line, _more)


def _converted_line(o: dict[str, Any]) -> str:
    info = o["info"]
    bare = info.get("bare_defaults") or {}
    note = (
        f"; without it, fails at {md_text(bare['fails_at'])}: "
        f"{md_code(str(bare.get('first_line', ''))[:200])}"
        if bare.get("fails_at")
        else ""
    )
    return (
        f"- `{o['case_id']}` ({o['target']}): opset {info['opset_from']} -> {info['opset_to']}, "
        f"{o.get('verdict') or o.get('status')}{note}"
    )


def preparation_lines(prepared: list[dict[str, Any]], max_listed: int = 50) -> list[str]:
    """Users' programs: each step the harness took beyond the program as given
    (``info.preparation``, model/preparation.py), beside the verdict."""
    if not prepared:
        return []
    lines = ["", f"### What the harness did beyond the program as given ({len(prepared)})", ""]
    return lines + capped_lines(
        prepared,
        max_listed,
        _prepared_line,
        lambda n: f"- …and {n} more (info.preparation in the results)",
    )


def _prepared_line(o: dict[str, Any]) -> str:
    steps = "; ".join(str(s) for s in o["info"]["preparation"])
    return (
        f"- {md_code(o['case_id'])} ({md_text(o['target'])}, "
        f"{md_text(o.get('verdict') or o.get('status'))}): {md_text(steps)}"
    )


def differs_across_targets(outcomes: list[dict[str, Any]]) -> list[tuple[str, dict[str, str]]]:
    """Cases whose result (pass, or the failure kind) is not the same on every target that ran them."""
    return [(d.case_id, d.by_target) for d in report_model.differs_across_targets(outcomes)]


def append_step_summary(markdown: str) -> bool:
    """Appends to $GITHUB_STEP_SUMMARY when set (``ghactions``, the one writer); returns whether it did."""
    return ghactions.append_step_summary(markdown)


def _inputs_note(outcome: dict[str, Any]) -> str:
    """``, inputs x=1x3x320x320`` for a case whose inputs were chosen (onnx.model_inputs)."""
    shapes = (outcome.get("info", {}).get("inputs") or {}).get("shapes")
    if not shapes:
        return ""
    return ", inputs " + " ".join(
        f"{k}={'x'.join(map(str, v)) or 'scalar'}" for k, v in shapes.items()
    )


def _issue_note(issue: str | None) -> str:
    """The note of a group whose signature is a known issue: " (matches iree-org/iree#N)"."""
    return f" (matches {md_text(issue)})" if issue else ""
