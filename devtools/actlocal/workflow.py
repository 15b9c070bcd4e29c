"""Which jobs and matrix rows of a workflow can run on this host, under act's host mode.

act runs every job on this Linux host (`-P ubuntu-latest=-self-hosted`), so:

- rows on macOS or Windows runners are left out (there is no such runner here);
- setup-python finds only what the tool cache holds, which is the host's interpreter:
  a job asking for another version X.Y gets a tool-cache entry X.Y.0 that *is* the host
  interpreter (mapped), and among rows that differ only in their Python version, one
  runs (the host's version if a row asks for it, else the newest) and the others are
  left out, so that the same job does not run twice on the same interpreter;
- `--matrix KEY=VALUE` leaves out the rows that do not match.

Each decision is a `RowPlan` with its reason; the summary lists them.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

SETUP_PYTHON = "actions/setup-python@"
_EXPR = re.compile(r"^\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}$")
_MATRIX_REF = re.compile(r"\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}")


@dataclass(frozen=True)
class RowPlan:
    """One matrix row of a job (an empty row for a job without a matrix)."""

    job: str
    matrix: Mapping[str, Any]
    runs: bool
    reason: str = ""
    python: str | None = None  # the version setup-python asks for, if any
    mapped_to: str | None = None  # the host version it runs on, when different

    def to_json(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "matrix": dict(self.matrix),
            "runs": self.runs,
            "reason": self.reason,
            "python": self.python,
            "mapped_to": self.mapped_to,
        }


@dataclass
class WorkflowPlan:
    name: str
    rows: list[RowPlan] = field(default_factory=list)

    def running(self) -> list[RowPlan]:
        return [r for r in self.rows if r.runs]

    def left_out(self) -> list[RowPlan]:
        return [r for r in self.rows if not r.runs]

    def python_versions(self) -> list[str]:
        """The versions setup-python will ask for in the rows that run (tool cache)."""
        return sorted({r.python for r in self.running() if r.python})

    def matrix_filters(self) -> dict[str, list[str]]:
        """act's --matrix filter: for each key, the values of the rows that run.

        act keeps a row when each of its keys that the filter names has one of the
        listed values, so the rows left out must differ in at least one listed key;
        `check_filters` verifies that.
        """
        filters: dict[str, set[str]] = {}
        for row in self.running():
            for key, value in row.matrix.items():
                filters.setdefault(key, set()).add(scalar(value))
        return {k: sorted(v) for k, v in sorted(filters.items())}

    def unfilterable(self) -> list[RowPlan]:
        """Rows left out that act's filter would still run (so the plan cannot hold)."""
        filters = self.matrix_filters()
        running_jobs = {r.job for r in self.running()}
        return [
            r
            for r in self.left_out()
            if r.job in running_jobs and r.matrix and matches(r.matrix, filters)
        ]


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def matches(row: Mapping[str, Any], filters: Mapping[str, Iterable[str]]) -> bool:
    return all(scalar(v) in set(filters[k]) for k, v in row.items() if k in filters)


def expand_matrix(strategy: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The rows of a job's `strategy.matrix`, as GitHub expands them (include/exclude)."""
    matrix = (strategy or {}).get("matrix")
    if not matrix:
        return [{}]
    if not isinstance(matrix, Mapping):
        raise ValueError(f"matrix must be a mapping, found {type(matrix).__name__} ({matrix!r})")
    axes = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    for key, values in axes.items():
        if not isinstance(values, list):
            raise ValueError(
                f"matrix axis {key!r} is not a list (expressions are not expanded here)"
            )
    rows = [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())] if axes else []
    for ex in matrix.get("exclude") or []:
        rows = [r for r in rows if not all(r.get(k) == v for k, v in ex.items())]
    base_keys = set(axes)
    originals = list(rows)
    added: list[dict[str, Any]] = []
    for inc in matrix.get("include") or []:
        merged = False
        for row in originals if axes else []:
            # An include entry extends every original row it does not contradict.
            if all(row.get(k) == v for k, v in inc.items() if k in base_keys):
                row.update({k: v for k, v in inc.items() if k not in base_keys})
                merged = True
        if not merged:
            added.append(dict(inc))
    return (originals + added) or [{}]


def substitute(text: Any, row: Mapping[str, Any]) -> Any:
    """`${{ matrix.K }}` replaced by the row's value (whole-expression keeps the type)."""
    if not isinstance(text, str):
        return text
    whole = _EXPR.match(text.strip())
    if whole and whole.group(1) in row:
        return row[whole.group(1)]
    return _MATRIX_REF.sub(lambda m: scalar(row.get(m.group(1), m.group(0))), text)


def runner_os(runs_on: Any) -> str:
    """linux, macos, windows or unknown, from a runs-on value."""
    labels = runs_on if isinstance(runs_on, list) else [runs_on]
    text = " ".join(str(label).lower() for label in labels)
    if "macos" in text:
        return "macos"
    if "windows" in text:
        return "windows"
    if "ubuntu" in text or "linux" in text:
        return "linux"
    return "unknown"


def setup_python_version(job: Mapping[str, Any], row: Mapping[str, Any]) -> str | None:
    for step in job.get("steps") or []:
        if str(step.get("uses", "")).startswith(SETUP_PYTHON):
            value = substitute((step.get("with") or {}).get("python-version"), row)
            return None if value is None else scalar(value)
    return None


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def plan_workflow(
    workflow: Mapping[str, Any],
    host_python: str,
    jobs: Iterable[str] = (),
    select: Mapping[str, str] | None = None,
) -> WorkflowPlan:
    """Decides, row by row, what runs here. `jobs` limits the plan to those job ids."""
    all_jobs = workflow.get("jobs") or {}
    wanted = list(jobs)
    unknown = [j for j in wanted if j not in all_jobs]
    if unknown:
        raise ValueError(
            f"no job {', '.join(unknown)} in the workflow (have: {', '.join(all_jobs)})"
        )
    plan = WorkflowPlan(name=str(workflow.get("name", "")))
    select = dict(select or {})
    host_minor = minor(host_python)
    for job_id, job in all_jobs.items():
        if wanted and job_id not in wanted:
            continue
        candidates: list[RowPlan] = []
        for row in expand_matrix(job.get("strategy")):
            os_name = runner_os(substitute(job.get("runs-on", ""), row))
            python = setup_python_version(job, row)
            if os_name in ("macos", "windows"):
                plan.rows.append(
                    RowPlan(
                        job_id,
                        row,
                        False,
                        f"{os_name} runner: act runs jobs on this Linux host only",
                        python,
                    )
                )
                continue
            if os_name == "unknown":
                plan.rows.append(
                    RowPlan(
                        job_id,
                        row,
                        False,
                        f"runs-on {job.get('runs-on')!r}: not a GitHub-hosted Linux label",
                        python,
                    )
                )
                continue
            off = [k for k, v in select.items() if k in row and scalar(row[k]) != v]
            if off:
                plan.rows.append(
                    RowPlan(
                        job_id,
                        row,
                        False,
                        "not selected (--matrix "
                        + ", ".join(f"{k}={select[k]}" for k in off)
                        + ")",
                        python,
                    )
                )
                continue
            candidates.append(RowPlan(job_id, row, True, "", python))
        plan.rows.extend(_one_per_python_group(candidates, host_python, host_minor))
    return plan


def _one_per_python_group(rows: list[RowPlan], host_python: str, host_minor: str) -> list[RowPlan]:
    """Among rows that differ only in the Python version, keep one (host's, else newest)."""
    groups: dict[str, list[RowPlan]] = {}
    for row in rows:
        python_keys = {
            k for k, v in row.matrix.items() if row.python is not None and scalar(v) == row.python
        }
        rest = {k: scalar(v) for k, v in row.matrix.items() if k not in python_keys}
        groups.setdefault(json.dumps(rest, sort_keys=True), []).append(row)
    out: list[RowPlan] = []
    for group in groups.values():

        def rank(r: RowPlan) -> tuple[int, tuple[int, ...]]:
            same = r.python is not None and minor(r.python) == host_minor
            parts = tuple(int(p) for p in re.findall(r"\d+", r.python or "0"))
            return (1 if same else 0, parts)

        keep = max(group, key=rank) if len(group) > 1 else group[0]
        for row in group:
            if row is keep:
                mapped = None
                reason = ""
                if row.python is not None and minor(row.python) != host_minor:
                    mapped = host_python
                    reason = f"Python {row.python} mapped to the host's {host_python} (tool cache)"
                out.append(RowPlan(row.job, row.matrix, True, reason, row.python, mapped))
            else:
                out.append(
                    RowPlan(
                        row.job,
                        row.matrix,
                        False,
                        f"Python {row.python}: not on this host (only {host_python}); "
                        f"the row with Python {keep.python} runs instead",
                        row.python,
                    )
                )
    return out
