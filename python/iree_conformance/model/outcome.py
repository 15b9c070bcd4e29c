"""The Outcome record: what happened to one case on one target."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

from iree_conformance.common.vocabulary import (  # noqa: F401 - the vocabulary's names, re-exported
    EXPECTATION_KINDS,
    STAGE_ORDER,
    STATUSES,
    ExpectationKind,
    Stage,
    Status,
)

# Outcome.stage is a Stage, Outcome.status a Status, Outcome.verdict a Verdict (each a str
# enum, so a plain string read from JSON compares equal).

_ERROR_KIND_BY_STAGE: dict[str, ExpectationKind] = {
    Stage.PREPARE: ExpectationKind.FAIL_PREPARE,
    Stage.IMPORT: ExpectationKind.FAIL_IMPORT,
    Stage.COMPILE: ExpectationKind.FAIL_COMPILE,
    Stage.LOAD: ExpectationKind.FAIL_RUN,
    Stage.RUN: ExpectationKind.FAIL_RUN,
    Stage.REFERENCE: ExpectationKind.FAIL_REFERENCE,
    Stage.COMPARE: ExpectationKind.FAIL_NUMERICS,
}


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


@dataclasses.dataclass
class Outcome:
    case_id: str
    suite: str
    target: str
    stage: str = Stage.PREPARE  # a Stage
    status: str = Status.PASS  # a Status
    diagnostics: list[str] = dataclasses.field(default_factory=list)
    stage_times: dict[str, float] = dataclasses.field(default_factory=dict)
    metrics: dict[str, Any] = dataclasses.field(default_factory=dict)
    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    reason: str = ""
    verdict: str | None = None  # a Verdict, once judged
    expected: str | None = None  # the listed ExpectationKind (or "a|b" for a flaky case)
    duration: float = 0.0
    # Earlier tries of this case in this run (retries in a fresh worker), oldest first,
    # each {"status", "stage", "kind", "diagnostics"}; the fields above are the last try.
    attempts: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def failure_kind(self) -> str | None:
        """The expectation kind this Outcome counts as, or None for pass/skip."""
        if self.status in (Status.PASS, Status.SKIP):
            return None
        if self.status in (Status.CRASH, Status.TIMEOUT):
            return ExpectationKind(self.status)
        if self.status == Status.FAIL:
            return ExpectationKind.FAIL_NUMERICS
        return _ERROR_KIND_BY_STAGE.get(self.stage, ExpectationKind.FAIL_RUN)

    def to_json(self) -> dict[str, Any]:
        """Plain data: the enum members become their strings (pytest-xdist's execnet
        carries the Outcome as a user property and serializes builtin types only)."""
        return _plain(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in fields})

    @property
    def observed(self) -> str:
        """What this try counts as in a manifest: its failure kind, or "pass"."""
        return self.failure_kind or "pass"

    @classmethod
    def of_kind(cls, case_id: str, suite: str, target: str, kind: str) -> Outcome:
        """An Outcome that counts as kind ("pass", "crash", "fail-compile", ...)."""
        if kind in ("pass", "crash", "timeout"):
            return cls(
                case_id, suite, target, stage="compare" if kind == "pass" else "run", status=kind
            )
        if kind == "fail-numerics":
            return cls(case_id, suite, target, stage="compare", status="fail")
        stages: dict[str, str] = {v: k for k, v in _ERROR_KIND_BY_STAGE.items() if k != "load"}
        stage = stages.get(kind, "run")
        return cls(case_id, suite, target, stage=stage, status="error")

    def as_attempt(self) -> dict[str, Any]:
        """A compact record of this try, for the attempts of a later one."""
        return {
            "status": self.status,
            "stage": self.stage,
            "kind": self.observed,
            "diagnostics": self.diagnostics[:3],
        }

    def summary(self) -> str:
        """One line for a pytest failure message."""
        head = f"{self.case_id} on {self.target}: {self.status} at {self.stage}"
        if self.diagnostics:
            head += "\n" + "\n".join(self.diagnostics[:8])
        return head
