"""The onnx backend scoreboard's result files (onnx/backend-scoreboard): what its
pytest hooks write after a run, and how its website generator reads them.

Written (its ``test/conftest.py``, ``pytest_terminal_summary``), in ``RESULTS_DIR``:

- ``report.json``: ``{"date": "MM/DD/YYYY HH:MM:SS", "passed": [...], "failed": [...],
  "skipped": [...]}``, each list the sorted pytest node ids of that outcome with the
  parts that name a ``.py`` file dropped (``OnnxBackendNodeModelTest::test_abs_cpu``).
  Only those three keys of pytest's stats: an xfailed or xpassed test is in none.
- ``trend.json``: a list of summaries ``{"date", "versions", "passed": N, "failed": N,
  "skipped": N}``; the new summary replaces the last one when the list has two or more
  entries, the same keys, and the same values apart from the date; else it is appended.
  ``versions`` is the ``pip list --format=json`` entries of the core packages (onnx and
  those its config names), read from ``pip-list.json`` in the same folder.

Read (its ``website-generator/generator.py``): the last trend entry gives the score,
``passed / (passed + failed + skipped)`` as a percentage, and a mark: A from 90, B from
80, C from 70, D from 60, F from 0 to 58 (the generator's table leaves 59 without a mark);
``report.json`` becomes one status per test.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.fsutil import atomic_write_text

__all__ = [
    "CORE_PACKAGES",
    "REPORT_KEYS",
    "Score",
    "ScoreboardPlugin",
    "make_report",
    "mark",
    "read_report",
    "read_trend",
    "score",
    "updated_trend",
    "write_results",
]

REPORT_KEYS = ("passed", "failed", "skipped")
DATE_FORMAT = "%m/%d/%Y %H:%M:%S"
#: The packages an IREE entry of the scoreboard's config.json would name as core.
CORE_PACKAGES = ("onnx", "iree-base-compiler", "iree-base-runtime", "iree-conformance")
_MARKS = (("A", 90, 101), ("B", 80, 90), ("C", 70, 80), ("D", 60, 70), ("F", 0, 59))


def _test_name(node_id: str) -> str:
    return "::".join(part for part in node_id.split("::") if ".py" not in part)


def make_report(stats: dict[str, list[Any]], now: datetime | None = None) -> dict[str, Any]:
    """report.json from pytest's terminal-reporter stats (reports with a ``nodeid``)."""
    report: dict[str, Any] = {"date": (now or datetime.now()).strftime(DATE_FORMAT)}
    for key in REPORT_KEYS:
        records = stats.get(key, [])
        report[key] = sorted(_test_name(r.nodeid) for r in records if hasattr(r, "nodeid"))
    return report


def updated_trend(
    trend: list[dict[str, Any]], report: dict[str, Any], versions: list[dict[str, str]]
) -> list[dict[str, Any]]:
    """The trend with this run's summary appended, or replacing an equal last one."""
    summary: dict[str, Any] = {"date": report["date"], "versions": versions}
    summary.update({k: len(v) for k, v in report.items() if isinstance(v, list)})
    same = (
        len(trend) >= 2
        and len(summary) == len(trend[-1])
        and all(summary.get(k) == trend[-1].get(k) for k in summary if k != "date")
    )
    return [*trend[:-1], summary] if same else [*trend, summary]


def _read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _installed_versions() -> list[dict[str, str]]:
    import importlib.metadata

    found = []
    for name in CORE_PACKAGES:
        try:
            found.append({"name": name, "version": importlib.metadata.version(name)})
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def write_results(results_dir: Path, report: dict[str, Any]) -> None:
    """Writes report.json and updates trend.json in results_dir, as the scoreboard does
    (versions from its pip-list.json when there is one, else from this environment)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    pip_list = _read_json(results_dir / "pip-list.json", None)
    if isinstance(pip_list, list):
        versions = [p for p in pip_list if isinstance(p, dict) and p.get("name") in CORE_PACKAGES]
    else:
        versions = _installed_versions()
    trend = _read_json(results_dir / "trend.json", [])
    trend = updated_trend(trend if isinstance(trend, list) else [], report, versions)
    atomic_write_text(results_dir / "report.json", json.dumps(report, sort_keys=True, indent=4))
    atomic_write_text(results_dir / "trend.json", json.dumps(trend, sort_keys=True, indent=4))


class ScoreboardPlugin:
    """A pytest plugin object: at the end of the run, the scoreboard's files in a folder."""

    def __init__(self, results_dir: Path):
        self.results_dir = Path(results_dir)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        try:
            write_results(self.results_dir, make_report(terminalreporter.stats))
        except OSError as e:  # a full disk or a folder taken away during the run
            self.failed = f"cannot write the scoreboard files into {self.results_dir}: {e}"
            terminalreporter.write_line(f"error: {self.failed}", red=True)
            return
        terminalreporter.write_line(f"scoreboard files: {self.results_dir}/report.json, trend.json")

    failed: str | None = None


# -- reading, as the scoreboard's website generator does -----------------------------
@dataclasses.dataclass(frozen=True)
class Score:
    passed: int
    failed: int
    skipped: int
    percent_passed: float
    mark: str | None

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped


def mark(percent: float) -> str | None:
    """The scoreboard's letter for a pass percentage (its ranges, 59 included: None)."""
    for letter, low, high in _MARKS:
        if low <= int(percent) < high:
            return letter
    return None


def read_trend(results_dir: Path) -> list[dict[str, Any]]:
    """trend.json; the generator treats a missing, broken or empty one as all zeros."""
    trend = _read_json(Path(results_dir) / "trend.json", None)
    if not isinstance(trend, list) or not trend:
        return [
            {"date": datetime.now().strftime(DATE_FORMAT), "failed": 0, "passed": 0, "skipped": 0}
        ]
    return trend


def score(trend: list[dict[str, Any]]) -> Score:
    """The score the scoreboard shows: from the last trend entry."""
    last = trend[-1]
    counts = [int(last.get(k, 0)) for k in REPORT_KEYS]
    total = sum(counts)
    percent = counts[0] / total * 100 if total else 0.0
    passed, failed, skipped = counts
    return Score(passed, failed, skipped, percent, mark(percent))


def read_report(results_dir: Path) -> dict[str, str]:
    """report.json as the generator reads it: test name -> status, sorted by name."""
    path = Path(results_dir) / "report.json"
    report = _read_json(path, None)
    if report is None:
        return {}
    if not isinstance(report, dict):
        raise ConfigurationError(f"{path}: not a scoreboard report (a JSON object)")
    report.pop("date", None)
    swapped = {test: status for status, tests in report.items() for test in tests}
    return dict(sorted(swapped.items()))
