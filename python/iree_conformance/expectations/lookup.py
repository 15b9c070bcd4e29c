"""Expectations manifests: known IREE failures and per-case tolerance overrides.

``conformance/expectations/<target>.toml`` (and an optional per-OS overlay
``<target>.<os>.toml`` whose entries replace the base file's; ``expect = "pass"`` in an
overlay says the case passes on that OS) holds two tables, one line per case::

    [xfail]
    "stablehlo/foo" = { expect = "fail-compile", reason = "error: failed to legalize ..." }
    "onnx-ops/test_baz" = { expect = ["pass", "fail-numerics"], reason = "flaky: reads uninitialized memory" }

``expect`` holds the expected kind (an ``ExpectationKind``); its old name ``stage`` is still
read (``iree-conformance update-expectations --migrate`` renames it), and an entry with
both is an error. A list of kinds declares a nondeterministic case: any of them gives
the verdict ``flaky``, which never turns a run red and never counts as a pass.

    [tolerance]
    "onnx-ops/test_bar" = { rtol = 1e-3, atol = 1e-5, reason = "fast exp approximation" }
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from pathlib import Path
from typing import Any

from iree_conformance.common.errors import ManifestError
from iree_conformance.expectations.known_issues import valid_issue
from iree_conformance.expectations.manifest import (  # noqa: F401 - the manifest format's names, re-exported
    EXPECT_KEY,
    OLD_EXPECT_KEY,
    ManifestFile,
    manifest_paths,
    read_manifest,
    recorded_on,
    render_manifest,
    update_manifest,
    updated_entries,
    with_recorded_on,
)
from iree_conformance.model.compare import Tolerance
from iree_conformance.model.outcome import EXPECTATION_KINDS


class ExpectationsError(ManifestError):
    """A manifest whose content breaks the format's rules; the message names file:line."""


@dataclasses.dataclass
class ManifestEntry:
    kinds: tuple[str, ...]  # one expected kind, or several for a flaky case ("pass" allowed)
    reason: str
    path: Path
    line: int | None
    issue: str | None = None  # the upstream issue it is, "iree-org/iree#N" (known_issues.py)

    @property
    def expect(self) -> str:
        """The expected kind as written: "fail-compile", or "pass|fail-numerics" when flaky."""
        return "|".join(self.kinds)

    @property
    def flaky(self) -> bool:
        return len(self.kinds) > 1

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)


@dataclasses.dataclass
class Expectations:
    target: str
    xfail: dict[str, ManifestEntry] = dataclasses.field(default_factory=dict)
    tolerance: dict[str, Tolerance] = dataclasses.field(default_factory=dict)
    tolerance_reasons: dict[str, str] = dataclasses.field(default_factory=dict)
    files: list[Path] = dataclasses.field(default_factory=list)
    recorded_on: str | None = None  # a host-specific target's manifest: the CPU it was recorded on

    def tolerance_for(self, case_id: str) -> Tolerance | None:
        return self.tolerance.get(case_id)


def _parse_kinds(
    stage: Any, allow_pass: bool, case_id: str, where: str, key: str = EXPECT_KEY
) -> tuple[str, ...]:
    """One kind ("fail-compile"), or a list of two or more for a flaky case ("pass" allowed)."""
    if isinstance(stage, list):
        allowed: tuple[str, ...] = EXPECTATION_KINDS + ("pass",)
        bad = [s for s in stage if s not in allowed]
        if bad or len(set(stage)) < 2 or len(set(stage)) != len(stage):
            raise ExpectationsError(
                f"{where}: flaky {key} list {stage!r} for {case_id!r} must name two or more different kinds of {', '.join(allowed)}"
            )
        return tuple(stage)
    allowed = EXPECTATION_KINDS + (("pass",) if allow_pass else ())
    if stage not in allowed:
        raise ExpectationsError(
            f"{where}: {key} {stage!r} for {case_id!r} is not one of {', '.join(allowed)} (or a list of them for a flaky case)"
        )
    return (stage,)


def _refuse_unknown_keys(spec: dict[str, Any], known: tuple[str, ...], case_id: str, where: str):
    """A typo (``expct =``) is named as the unknown key it is, before the entry is read
    without it (which would report the expected kind as missing)."""
    extra = sorted(set(spec) - set(known))
    if extra:
        close = difflib.get_close_matches(extra[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(known)}"
        raise ExpectationsError(
            f"{where}: unknown key{'s' if len(extra) > 1 else ''} "
            f"{', '.join(repr(k) for k in extra)} for {case_id!r}{hint}"
        )


def _parse_file(
    path: Path, allow_pass: bool
) -> tuple[dict[str, ManifestEntry], dict[str, tuple[Tolerance, str]]]:
    try:
        manifest = read_manifest(path)
    except ManifestError as e:  # missing, unreadable or malformed TOML (names file:line)
        raise ExpectationsError(str(e)) from None
    data = manifest.data
    unknown = set(data) - {"xfail", "tolerance"}
    if unknown:
        name = sorted(unknown)[0]
        raise ExpectationsError(
            f"{manifest.where(name)}: unknown table(s) {sorted(unknown)}; expected [xfail] and [tolerance]"
        )
    for table in ("xfail", "tolerance"):
        if table in data and not isinstance(data[table], dict):
            raise ExpectationsError(
                f"{manifest.where(table)}: {table} must be a table ([{table}]), not a value"
            )
    xfail: dict[str, ManifestEntry] = {}
    for case_id, spec in data.get("xfail", {}).items():
        line = manifest.key_lines.get(("xfail", case_id))
        where = manifest.where("xfail", case_id)
        if not isinstance(spec, dict):
            raise ExpectationsError(
                f"{where}: entry for {case_id!r} must be an inline table {{ expect = ..., reason = ... }}"
            )
        if EXPECT_KEY in spec and OLD_EXPECT_KEY in spec:
            raise ExpectationsError(
                f"{where}: {case_id!r} has both {EXPECT_KEY} and {OLD_EXPECT_KEY} (its old name); keep {EXPECT_KEY} only"
            )
        _refuse_unknown_keys(spec, (EXPECT_KEY, OLD_EXPECT_KEY, "reason", "issue"), case_id, where)
        issue = spec.get("issue")
        if issue is not None and not valid_issue(issue):
            raise ExpectationsError(
                f'{where}: {case_id!r} has issue = {issue!r}; write it "owner/repo#N", e.g. "iree-org/iree#123"'
            )
        key = OLD_EXPECT_KEY if OLD_EXPECT_KEY in spec else EXPECT_KEY
        stage, reason = spec.get(key), spec.get("reason")
        kinds = _parse_kinds(stage, allow_pass, case_id, where, key)
        if not isinstance(reason, str) or not reason.strip():
            raise ExpectationsError(
                f"{where}: {case_id!r} needs a non-empty reason (first error line or issue link)"
            )
        xfail[case_id] = ManifestEntry(kinds, reason, path, line, issue)
    tolerance: dict[str, tuple[Tolerance, str]] = {}
    for case_id, spec in data.get("tolerance", {}).items():
        where = manifest.where("tolerance", case_id)
        if not isinstance(spec, dict):
            raise ExpectationsError(f"{where}: tolerance for {case_id!r} must be an inline table")
        _refuse_unknown_keys(spec, ("rtol", "atol", "reason"), case_id, where)
        rtol, atol, reason = spec.get("rtol"), spec.get("atol"), spec.get("reason")
        for name, value in (("rtol", rtol), ("atol", atol)):
            if value is not None and (
                type(value) not in (int, float) or not math.isfinite(value) or value < 0
            ):
                raise ExpectationsError(
                    f"{where}: {name} for {case_id!r} must be a finite non-negative number"
                )
        if rtol is None and atol is None:
            raise ExpectationsError(
                f"{where}: tolerance for {case_id!r} sets neither rtol nor atol"
            )
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
        result.recorded_on = recorded_on(path) or result.recorded_on  # the header's CPU
        for case_id, entry in xfail.items():
            if entry.kinds == ("pass",):
                result.xfail.pop(case_id, None)
            else:
                result.xfail[case_id] = entry
        for case_id, (tol, reason) in tolerance.items():
            result.tolerance[case_id] = tol
            result.tolerance_reasons[case_id] = reason
        result.files.append(path)
    return result


#: The old name of ``manifest.update_manifest``.
write_updated_manifest = update_manifest
