"""Results JSON (all Outcomes plus run metadata) and its Markdown rendering."""

from __future__ import annotations

import collections
import datetime
import importlib.metadata
import json
import platform
import re
from pathlib import Path
from typing import Any

from . import ghactions
from .diagnostics import normalize
from .fsutil import atomic_write_text
from .platform_info import cpu_fingerprint, host_arch, host_cpu, host_os
from .results import (  # noqa: F401 - the schema's names, re-exported
    SCHEMA,
    VERDICTS,
    ResultsError,
    load_results,
    results_document,
)

#: The results file's errors (the name the reports and the CLI have always used).
ReportError = ResultsError


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def run_metadata(targets: list[str], started: datetime.datetime, argv: list[str]) -> dict[str, Any]:
    return {
        "iree_compiler": _version("iree-base-compiler"),
        "iree_runtime": _version("iree-base-runtime"),
        "onnx": _version("onnx"),
        "onnxruntime": _version("onnxruntime"),
        "jax": _version("jax"),
        "jaxlib": _version("jaxlib"),
        "flax": _version("flax"),
        "iree_conformance": _version("iree-conformance"),
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
    meta, outcomes = data.get("metadata", {}), data["outcomes"]
    lines = ["## IREE conformance results", ""]
    lines.append(
        f"IREE compiler {meta.get('iree_compiler')}, runtime {meta.get('iree_runtime')}; onnx {meta.get('onnx')}, "
        f"onnxruntime {meta.get('onnxruntime')}; Python {meta.get('python')} on {meta.get('os')}/{meta.get('arch')} "
        f"({meta.get('platform')}); started {meta.get('started')}, finished {meta.get('finished')}."
    )
    lines += [
        "",
        "| suite | target | " + " | ".join(VERDICTS) + " | total |",
        "|---|---|" + "---:|" * (len(VERDICTS) + 1),
    ]
    counts: dict[tuple[str, str], collections.Counter] = collections.defaultdict(
        collections.Counter
    )
    for o in outcomes:
        counts[(o["suite"], o["target"])][o.get("verdict") or o["status"]] += 1
    for (suite, target), c in sorted(counts.items()):
        lines.append(
            f"| {suite} | {target} | "
            + " | ".join(str(c[v]) for v in VERDICTS)
            + f" | {sum(c.values())} |"
        )
    bad = [o for o in outcomes if o.get("verdict") in ("fail", "xpass")]
    if bad:
        lines += ["", f"### Failures ({len(bad)})", ""]
        groups: dict[tuple[str, str], list[dict[str, Any]]] = collections.defaultdict(list)
        for o in bad:
            first = next((d for d in o.get("diagnostics", []) if d.strip()), o.get("reason", ""))
            groups[(o.get("stage", "?"), normalize(first) if first else "(no diagnostic)")].append(
                o
            )
        for (stage, line), members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            ids = ", ".join(f"`{m['case_id']}` ({m['target']})" for m in members[:10])
            more = f" and {len(members) - 10} more" if len(members) > 10 else ""
            lines.append(f"- **{stage}** x{len(members)}: `{line}`: {ids}{more}")
    flaky = [o for o in outcomes if o.get("verdict") == "flaky"]
    if flaky:
        lines += ["", f"### Flaky ({len(flaky)}): never red, never counted as a pass", ""]
        for o in sorted(flaky, key=lambda o: (o["case_id"], o["target"])):
            seen = (
                " then ".join(
                    [a.get("kind", "?") for a in o.get("attempts", [])] + [o.get("status", "?")]
                )
                if o.get("attempts")
                else o.get("expected", "")
            )
            lines.append(f"- `{o['case_id']}` ({o['target']}): {seen}")
    differ = differs_across_targets(outcomes)
    if differ:
        targets = sorted({o["target"] for o in outcomes})
        lines += [
            "",
            f"### Differs across targets ({len(differ)})",
            "",
            "| case | " + " | ".join(targets) + " |",
            "|---|" + "---|" * len(targets),
        ]
        for case_id, by_target in differ:
            lines.append(
                f"| `{case_id}` | " + " | ".join(by_target.get(t, "-") for t in targets) + " |"
            )
    xfails = collections.Counter(o.get("expected") for o in outcomes if o.get("verdict") == "xfail")
    if xfails:
        lines += ["", "### Expected failures by stage", ""]
        lines += [f"- {stage}: {n}" for stage, n in sorted(xfails.items())]
    with_timing = [o for o in outcomes if o.get("metrics", {}).get("timing")]
    if with_timing:
        lines += [
            "",
            "### Timing (informative, not pass/fail)",
            "",
            "median of N calls after a warm-up; inputs already on the device",
            "",
            "| case | target | IREE ms | upload ms | onnxruntime ms |",
            "|---|---|---:|---:|---:|",
        ]
        for o in sorted(with_timing, key=lambda o: (o["case_id"], o["target"])):
            t = o["metrics"]["timing"]
            ort = t.get("onnxruntime_median_s")
            lines.append(
                f"| `{o['case_id']}` | {o['target']} | {t['iree_median_s'] * 1e3:.3f} | {t.get('iree_upload_median_s', 0.0) * 1e3:.3f} | "
                + (f"{ort * 1e3:.3f} |" if ort is not None else "- |")
            )
    timed = sorted(outcomes, key=lambda o: o.get("duration", 0.0), reverse=True)[:slowest]
    if timed:
        lines += [
            "",
            f"### Slowest {len(timed)} cases",
            "",
            "| case | target | seconds | compile s |",
            "|---|---|---:|---:|",
        ]
        for o in timed:
            lines.append(
                f"| `{o['case_id']}` | {o['target']} | {o.get('duration', 0.0):.2f} | {o.get('stage_times', {}).get('compile', 0.0):.2f} |"
            )
    return "\n".join(lines) + "\n"


def differs_across_targets(outcomes: list[dict[str, Any]]) -> list[tuple[str, dict[str, str]]]:
    """Cases whose result (pass, or the failure kind) is not the same on every target that ran them."""
    from .outcome import Outcome

    by_case: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for o in outcomes:
        if o.get("status") == "skip":
            continue
        by_case[o["case_id"]][o["target"]] = Outcome.from_json(o).observed
    return [
        (case_id, seen)
        for case_id, seen in sorted(by_case.items())
        if len(seen) > 1 and len(set(seen.values())) > 1
    ]


def append_step_summary(markdown: str) -> bool:
    """Appends to $GITHUB_STEP_SUMMARY when set (``ghactions``, the one writer); returns whether it did."""
    return ghactions.append_step_summary(markdown)
