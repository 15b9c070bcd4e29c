"""The HTML report's own numbers (the page header); every count comes from the report model.

The sections (verdict matrix, stage funnel, failure groups, slowest cases, ...) are
``report_model``'s, the same the Markdown and the CI tables render; their names are
re-exported here for the template and the operator scoreboard.
"""

from __future__ import annotations

from typing import Any

from iree_conformance.report.model import (  # noqa: F401 - the model's sections, re-exported
    FUNNEL,
    FUNNEL_STEPS,
    FailureGroup,
    Funnel,
    failure_groups,
    first_line,
    funnels,
    is_failure,
    platform_of,
    verdict_of,
)


def header(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Versions, platforms and times of the current runs (distinct values, sorted)."""
    metas = [r.get("metadata") or {} for r in runs]

    def distinct(key: str) -> list[str]:
        return sorted({str(m.get(key)) for m in metas if m.get(key)})

    platforms = sorted(
        {
            f"{r.get('os', '?')}/{r.get('arch', '?')} (Python {r.get('python', '?')}, "
            f"{(r.get('metadata') or {}).get('platform', '?')})"
            for r in runs
        }
    )
    return {
        "versions": {
            name: distinct(key)
            for name, key in (
                ("IREE compiler", "iree_compiler"),
                ("IREE runtime", "iree_runtime"),
                ("onnx", "onnx"),
                ("onnxruntime", "onnxruntime"),
            )
        },
        "platforms": platforms,
        "targets": sorted({t for m in metas for t in m.get("targets", [])}),
        "started": min(distinct("started"), default="?"),
        "finished": max(distinct("finished"), default="?"),
    }
