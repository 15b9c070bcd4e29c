"""Expectations manifests: known IREE failures and per-case tolerance overrides.

``conformance/expectations/<target>.toml`` (and an optional per-OS overlay
``<target>.<os>.toml`` whose entries replace the base file's; ``stage = "pass"`` in an
overlay says the case passes on that OS) holds two tables, one line per case::

    [xfail]
    "stablehlo/foo" = { stage = "fail-compile", reason = "error: failed to legalize ..." }
    "onnx-ops/test_baz" = { stage = ["pass", "fail-numerics"], reason = "flaky: reads uninitialized memory" }

A list of stages declares a nondeterministic case: any of them gives the verdict
``flaky``, which never turns a run red and never counts as a pass.

    [tolerance]
    "onnx-ops/test_bar" = { rtol = 1e-3, atol = 1e-5, reason = "fast exp approximation" }
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any

from .compare import Tolerance
from .diagnostics import normalize
from .outcome import EXPECTATION_KINDS, Outcome
from .tomlio import TomlError, line_of, load_toml


class ExpectationsError(ValueError):
    pass


@dataclasses.dataclass
class Entry:
    stages: tuple[str, ...]  # one expected kind, or several for a flaky case ("pass" allowed)
    reason: str
    path: Path
    line: int | None

    @property
    def stage(self) -> str:
        """The expected kind as written: "fail-compile", or "pass|fail-numerics" when flaky."""
        return "|".join(self.stages)

    @property
    def flaky(self) -> bool:
        return len(self.stages) > 1

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)


@dataclasses.dataclass
class Verdict:
    name: str  # pass | xfail | flaky | fail | xpass | skip
    message: str
    expected: str | None


@dataclasses.dataclass
class Expectations:
    target: str
    xfail: dict[str, Entry] = dataclasses.field(default_factory=dict)
    tolerance: dict[str, Tolerance] = dataclasses.field(default_factory=dict)
    tolerance_reasons: dict[str, str] = dataclasses.field(default_factory=dict)
    files: list[Path] = dataclasses.field(default_factory=list)
    recorded_on: str | None = None  # a host-specific target's manifest: the CPU it was recorded on

    def tolerance_for(self, case_id: str) -> Tolerance | None:
        return self.tolerance.get(case_id)

    def judge(self, outcome: Outcome) -> Verdict:
        entry = self.xfail.get(outcome.case_id)
        expected = entry.stage if entry else None
        kind = outcome.failure_kind
        if outcome.status == "skip":
            return Verdict("skip", outcome.reason or "skipped", expected)
        if entry is not None and entry.flaky:
            if outcome.observed in entry.stages:
                return Verdict("flaky", f"flaky ({entry.stage}), {outcome.observed} this time: {entry.reason}", expected)
            return Verdict("fail", f"expected one of {entry.stage} ({entry.where}) but got {outcome.observed}: {outcome.summary()}", expected)
        if kind is None:
            if entry is None:
                return Verdict("pass", "", None)
            return Verdict(
                "xpass",
                f"XPASS(strict): {outcome.case_id} now passes on {outcome.target} but is listed as "
                f"{entry.stage}; delete its line at {entry.where}",
                expected,
            )
        if entry is None:
            return Verdict("fail", f"unexpected {kind}: {outcome.summary()}", None)
        if entry.stage == kind:
            return Verdict("xfail", f"{kind}: {entry.reason}", expected)
        return Verdict("fail", f"expected {entry.stage} ({entry.where}) but got {kind}{_direction(kind, outcome.stage, entry.stage)}: {outcome.summary()}", expected)


_STAGE_OF_KIND = {"fail-prepare": "prepare", "fail-import": "import", "fail-compile": "compile", "fail-run": "run",
                  "fail-reference": "reference", "fail-numerics": "compare"}


def _direction(kind: str, stage: str, expected_kind: str) -> str:
    """', at an earlier stage' or ', at a later stage' when the stages can be ordered."""
    from .outcome import STAGE_ORDER

    expected_stage = _STAGE_OF_KIND.get(expected_kind)
    actual_stage = _STAGE_OF_KIND.get(kind, stage)
    if expected_stage is None or actual_stage not in STAGE_ORDER or actual_stage == expected_stage:
        return ""
    earlier = STAGE_ORDER.index(actual_stage) < STAGE_ORDER.index(expected_stage)
    return f", at an {'earlier' if earlier else 'later'} stage ({actual_stage})"


def manifest_paths(directory: Path, target: str, os_name: str) -> tuple[Path, Path]:
    return directory / f"{target}.toml", directory / f"{target}.{os_name}.toml"


_KEY_AT_LINE_START = re.compile(r"""^\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")


def _key_lines(path: Path) -> dict[str, int]:
    """Line of each table key, read in one pass (quoted, single-quoted or bare keys)."""
    lines: dict[str, int] = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return lines
    for number, line in enumerate(text.splitlines(), 1):
        m = _KEY_AT_LINE_START.match(line)
        if not m:
            continue
        raw = m.group(1)
        try:
            key = json.loads(raw) if raw.startswith('"') else raw.strip("'")
        except ValueError:
            continue
        lines.setdefault(key, number)
    return lines


def _parse_stages(stage: Any, allow_pass: bool, case_id: str, where: str) -> tuple[str, ...]:
    """One kind ("fail-compile"), or a list of two or more for a flaky case ("pass" allowed)."""
    if isinstance(stage, list):
        allowed = EXPECTATION_KINDS + ("pass",)
        bad = [s for s in stage if s not in allowed]
        if bad or len(set(stage)) < 2 or len(set(stage)) != len(stage):
            raise ExpectationsError(
                f"{where}: flaky stage list {stage!r} for {case_id!r} must name two or more different kinds of {', '.join(allowed)}"
            )
        return tuple(stage)
    allowed = EXPECTATION_KINDS + (("pass",) if allow_pass else ())
    if stage not in allowed:
        raise ExpectationsError(f"{where}: stage {stage!r} for {case_id!r} is not one of {', '.join(allowed)} (or a list of them for a flaky case)")
    return (stage,)


def _parse_file(path: Path, allow_pass: bool) -> tuple[dict[str, Entry], dict[str, tuple[Tolerance, str]]]:
    try:
        data = load_toml(path)
    except TomlError as e:
        raise ExpectationsError(str(e)) from None
    unknown = set(data) - {"xfail", "tolerance"}
    if unknown:
        raise ExpectationsError(f"{path}:{line_of(path, '[' + sorted(unknown)[0])}: unknown table(s) {sorted(unknown)}; expected [xfail] and [tolerance]")
    for table in ("xfail", "tolerance"):
        if table in data and not isinstance(data[table], dict):
            raise ExpectationsError(f"{path}:{line_of(path, table)}: {table} must be a table ([{table}]), not a value")
    key_lines = _key_lines(path)
    xfail: dict[str, Entry] = {}
    for case_id, spec in data.get("xfail", {}).items():
        line = key_lines.get(case_id)
        where = f"{path}:{line}"
        if not isinstance(spec, dict):
            raise ExpectationsError(f"{where}: entry for {case_id!r} must be an inline table {{ stage = ..., reason = ... }}")
        stage, reason = spec.get("stage"), spec.get("reason")
        stages = _parse_stages(stage, allow_pass, case_id, where)
        if not isinstance(reason, str) or not reason.strip():
            raise ExpectationsError(f"{where}: {case_id!r} needs a non-empty reason (first error line or issue link)")
        extra = set(spec) - {"stage", "reason"}
        if extra:
            raise ExpectationsError(f"{where}: unknown keys {sorted(extra)} for {case_id!r}")
        xfail[case_id] = Entry(stages, reason, path, line)
    tolerance: dict[str, tuple[Tolerance, str]] = {}
    for case_id, spec in data.get("tolerance", {}).items():
        where = f"{path}:{key_lines.get(case_id)}"
        if not isinstance(spec, dict):
            raise ExpectationsError(f"{where}: tolerance for {case_id!r} must be an inline table")
        rtol, atol, reason = spec.get("rtol"), spec.get("atol"), spec.get("reason")
        for name, value in (("rtol", rtol), ("atol", atol)):
            if value is not None and (type(value) not in (int, float) or not math.isfinite(value) or value < 0):
                raise ExpectationsError(f"{where}: {name} for {case_id!r} must be a finite non-negative number")
        if rtol is None and atol is None:
            raise ExpectationsError(f"{where}: tolerance for {case_id!r} sets neither rtol nor atol")
        if not isinstance(reason, str) or not reason.strip():
            raise ExpectationsError(f"{where}: tolerance for {case_id!r} needs a reason")
        tolerance[case_id] = (Tolerance(rtol=rtol, atol=atol), reason)
    return xfail, tolerance


def load_expectations(directory: Path, target: str, os_name: str) -> Expectations:
    base, overlay = manifest_paths(directory, target, os_name)
    result = Expectations(target)
    for path, is_overlay in ((base, False), (overlay, True)):
        if not path.exists():
            continue
        xfail, tolerance = _parse_file(path, allow_pass=is_overlay)
        result.recorded_on = recorded_on(path) or result.recorded_on
        for case_id, entry in xfail.items():
            if entry.stages == ("pass",):
                result.xfail.pop(case_id, None)
            else:
                result.xfail[case_id] = entry
        for case_id, (tol, reason) in tolerance.items():
            result.tolerance[case_id] = tol
            result.tolerance_reasons[case_id] = reason
        result.files.append(path)
    return result


def _reason_for(outcome: Outcome) -> str:
    for line in outcome.diagnostics:
        if line.strip():
            return normalize(line) if len(line) > 200 else line.strip()
    return outcome.failure_kind or "failed"


def updated_entries(current: dict[str, dict[str, Any]], outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    """The xfail table after a run: new failures added, fixed ones dropped, reasons kept."""
    entries = {k: dict(v) for k, v in current.items()}
    for outcome in outcomes:
        kind = outcome.failure_kind
        if outcome.status == "skip":
            continue
        seen = sorted({a["kind"] for a in outcome.attempts} | {outcome.observed}, key=_kind_order)
        old = entries.get(outcome.case_id)
        old_stages = _as_list(old.get("stage")) if old else []
        if len(old_stages) > 1 and set(seen) <= set(old_stages):
            continue  # a declared flaky case stays declared while it keeps to its kinds
        if len(seen) > 1:
            entries[outcome.case_id] = {"stage": seen, "reason": f"flaky: {' and '.join(seen)} in one run (retried in a fresh worker)"}
            continue
        if kind is None:
            entries.pop(outcome.case_id, None)
            continue
        if old and old.get("stage") == kind:
            continue
        entries[outcome.case_id] = {"stage": kind, "reason": _reason_for(outcome)}
    return entries


def _as_list(stage: Any) -> list[str]:
    return list(stage) if isinstance(stage, list) else [stage] if stage else []


def _kind_order(kind: str) -> int:
    order = ("pass",) + EXPECTATION_KINDS
    return order.index(kind) if kind in order else len(order)


def _toml_stage(stage: Any) -> str:
    if isinstance(stage, list):
        return "[" + ", ".join(_toml_string(s) for s in stage) + "]"
    return _toml_string(stage)


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def render_manifest(target: str, xfail: dict[str, dict[str, Any]], tolerance: dict[str, dict[str, Any]], header: str = "") -> str:
    lines = [header.rstrip("\n")] if header else [f"# Known IREE failures and tolerance overrides for target {target}."]
    lines += ["", "[xfail]"]
    for case_id in sorted(xfail):
        e = xfail[case_id]
        lines.append(f"{_toml_string(case_id)} = {{ stage = {_toml_stage(e['stage'])}, reason = {_toml_string(e['reason'])} }}")
    lines += ["", "[tolerance]"]
    for case_id in sorted(tolerance):
        t = tolerance[case_id]
        parts = [f"{k} = {t[k]!r}" for k in ("rtol", "atol") if t.get(k) is not None]
        parts.append(f"reason = {_toml_string(t['reason'])}")
        lines.append(f"{_toml_string(case_id)} = {{ {', '.join(parts)} }}")
    return "\n".join(lines) + "\n"


RECORDED_ON = "# recorded on: "


def recorded_on(path: Path) -> str | None:
    """The CPU fingerprint in a host-specific manifest's header (``# recorded on: ...``)."""
    for line in _header_of(path).splitlines():
        if line.startswith(RECORDED_ON):
            return line[len(RECORDED_ON) :].strip()
    return None


def with_recorded_on(header: str, fingerprint: str) -> str:
    """The header with its ``# recorded on:`` line set to fingerprint."""
    lines = [ln for ln in header.splitlines() if not ln.startswith(RECORDED_ON)]
    return "\n".join([*lines, RECORDED_ON + fingerprint])


def _header_of(path: Path) -> str:
    if not path.exists():
        return ""
    header = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    return "\n".join(header)


def write_updated_manifest(
    path: Path, target: str, outcomes: list[Outcome], base: dict[str, dict[str, Any]] | None = None, host: str | None = None
) -> bool:
    """Rewrites path from a run; with base given (an overlay), keeps only the differences.

    host: for a host-specific target, the CPU fingerprint the header records. Returns
    True when the file changed.
    """
    data = load_toml(path) if path.exists() else {}
    if base is None:
        current = data.get("xfail", {})
        entries = updated_entries(current, outcomes)
    else:
        merged = {**base, **data.get("xfail", {})}
        merged = {k: v for k, v in merged.items() if v.get("stage") != "pass"}
        entries_all = updated_entries(merged, outcomes)
        entries = {k: v for k, v in entries_all.items() if base.get(k) != v}
        for case_id in base:
            if case_id not in entries_all:
                entries[case_id] = {"stage": "pass", "reason": "passes on this OS"}
    header = _header_of(path)
    if host is not None:
        header = with_recorded_on(header or f"# Known IREE failures and tolerance overrides for target {target}.", host)
    text = render_manifest(target, entries, data.get("tolerance", {}), header)
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if text == old:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")
    return True
