"""The Outcome record: what happened to one case on one target."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


class Stage(str, enum.Enum):
    PREPARE = "prepare"
    IMPORT = "import"
    COMPILE = "compile"
    LOAD = "load"
    RUN = "run"
    REFERENCE = "reference"
    COMPARE = "compare"


STAGE_ORDER = [s.value for s in Stage]


class Status(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"  # numerics or shapes differ at compare
    ERROR = "error"  # a stage raised a clean error
    CRASH = "crash"  # the worker process died
    TIMEOUT = "timeout"  # a stage ran past its limit
    SKIP = "skip"  # cannot run here (unsupported IO, offline, target absent)


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
    stage: str = Stage.PREPARE.value
    status: str = Status.PASS.value
    diagnostics: list[str] = dataclasses.field(default_factory=list)
    stage_times: dict[str, float] = dataclasses.field(default_factory=dict)
    metrics: dict[str, Any] = dataclasses.field(default_factory=dict)
    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    reason: str = ""
    verdict: str | None = None
    expected: str | None = None
    duration: float = 0.0

    @property
    def failure_kind(self) -> str | None:
        """The expectation kind this Outcome counts as, or None for pass/skip."""
        if self.status in (Status.PASS.value, Status.SKIP.value):
            return None
        if self.status == Status.CRASH.value:
            return "crash"
        if self.status == Status.TIMEOUT.value:
            return "timeout"
        if self.status == Status.FAIL.value:
            return "fail-numerics"
        return _ERROR_KIND_BY_STAGE.get(self.stage, "fail-run")

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in fields})

    def summary(self) -> str:
        """One line for a pytest failure message."""
        head = f"{self.case_id} on {self.target}: {self.status} at {self.stage}"
        if self.diagnostics:
            head += "\n" + "\n".join(self.diagnostics[:8])
        return head
