"""The Outcome record: what happened to one case on one target."""

from __future__ import annotations

import dataclasses
from typing import Any

# Stages, in the order a case goes through them; Outcome.stage is one of these strings.
STAGE_ORDER = ("prepare", "import", "compile", "load", "run", "reference", "compare")

# What happened at that stage; Outcome.status is one of these strings:
#   pass; fail (numerics or shapes differ at compare); error (a stage raised a clean error);
#   crash (the worker process died); timeout (a stage ran past its limit);
#   skip (cannot run here: unsupported IO, offline, target absent).
STATUSES = ("pass", "fail", "error", "crash", "timeout", "skip")


# Expectation kinds a manifest may list, in the order a case reaches them.
EXPECTATION_KINDS = (
    "fail-prepare",
    "fail-import",
    "fail-compile",
    "fail-run",
    "fail-reference",
    "fail-numerics",
    "crash",
    "timeout",
)

_ERROR_KIND_BY_STAGE = {
    "prepare": "fail-prepare",
    "import": "fail-import",
    "compile": "fail-compile",
    "load": "fail-run",
    "run": "fail-run",
    "reference": "fail-reference",
    "compare": "fail-numerics",
}


@dataclasses.dataclass
class Outcome:
    case_id: str
    suite: str
    target: str
    stage: str = "prepare"  # one of STAGE_ORDER
    status: str = "pass"  # one of STATUSES
    diagnostics: list[str] = dataclasses.field(default_factory=list)
    stage_times: dict[str, float] = dataclasses.field(default_factory=dict)
    metrics: dict[str, Any] = dataclasses.field(default_factory=dict)
    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    reason: str = ""
    verdict: str | None = None
    expected: str | None = None
    duration: float = 0.0
    # Earlier tries of this case in this run (retries in a fresh worker), oldest first,
    # each {"status", "stage", "kind", "diagnostics"}; the fields above are the last try.
    attempts: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def failure_kind(self) -> str | None:
        """The expectation kind this Outcome counts as, or None for pass/skip."""
        if self.status in ("pass", "skip"):
            return None
        if self.status in ("crash", "timeout"):
            return self.status
        if self.status == "fail":
            return "fail-numerics"
        return _ERROR_KIND_BY_STAGE.get(self.stage, "fail-run")

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

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
        stage = {v: k for k, v in _ERROR_KIND_BY_STAGE.items() if k != "load"}.get(kind, "run")
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
