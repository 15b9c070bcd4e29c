"""The Outcome record: what happened to one case on one target."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any, TypeVar

from iree_conformance.common.unicode_text import valid_text
from iree_conformance.common.vocabulary import (  # noqa: F401 - the vocabulary's names, re-exported
    EXPECTATION_KINDS,
    STAGE_ORDER,
    STATUSES,
    ExpectationKind,
    Stage,
    Status,
    Verdict,
)

# Outcome.stage is a Stage, Outcome.status a Status, Outcome.verdict a Verdict: str enums,
# so they compare equal to the plain strings of a results file. An Outcome made from plain
# strings (from_json) holds the members; a word this version does not know (a results file
# of a later one) stays a plain string, which the reports still count in a column of its own.

_E = TypeVar("_E", Stage, Status, Verdict)


def _member(enum: type[_E], value: Any) -> _E:
    try:
        return enum(value)
    except ValueError:
        return value  # unknown here: kept as read


#: The pytest skip reason, report column and section of a case the harness could not judge.
NOT_JUDGED = "not judged"


def not_judged(status: Any, stage: Any) -> bool:
    """The harness could not judge the case: an error (or timeout) at ``reference``: no
    reference to check IREE against, or inputs whose values are no verdict
    (``model/unjudged.py``). Never IREE's failure, never a pass: pytest skips it with
    "not judged: ...", the report gives it a section of its own and leaves it out of the
    failures and the funnel, and check-model exits 9."""
    return stage == Stage.REFERENCE and status in (Status.ERROR, Status.TIMEOUT)


_ERROR_KIND_BY_STAGE: dict[Stage, ExpectationKind] = {
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
    stage: Stage = Stage.PREPARE
    status: Status = Status.PASS
    diagnostics: list[str] = dataclasses.field(default_factory=list)
    stage_times: dict[str, float] = dataclasses.field(default_factory=dict)
    metrics: dict[str, Any] = dataclasses.field(default_factory=dict)
    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    reason: str = ""
    verdict: Verdict | None = None  # once judged
    expected: str | None = None  # the listed ExpectationKind (or "a|b" for a flaky case)
    duration: float = 0.0
    # Earlier tries of this case in this run (retries in a fresh worker), oldest first,
    # each {"status", "stage", "kind", "diagnostics"}; the fields above are the last try.
    attempts: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.stage, self.status = _member(Stage, self.stage), _member(Status, self.status)
        # names of files that are not UTF-8 (common/unicode_text.py), in ids and messages
        self.case_id, self.reason = valid_text(self.case_id), valid_text(self.reason)
        self.diagnostics = [valid_text(str(d)) for d in self.diagnostics]
        if self.verdict is not None:
            self.verdict = _member(Verdict, self.verdict)

    @property
    def not_judged(self) -> bool:
        """The harness could not judge this Outcome (``not_judged``)."""
        return not_judged(self.status, self.stage)

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
        if kind == Status.PASS:
            return cls(case_id, suite, target, stage=Stage.COMPARE, status=Status.PASS)
        if kind in (ExpectationKind.CRASH, ExpectationKind.TIMEOUT):
            return cls(case_id, suite, target, stage=Stage.RUN, status=Status(kind))
        if kind == ExpectationKind.FAIL_NUMERICS:
            return cls(case_id, suite, target, stage=Stage.COMPARE, status=Status.FAIL)
        stages = {v: k for k, v in _ERROR_KIND_BY_STAGE.items() if k != Stage.LOAD}
        stage = stages.get(kind, Stage.RUN)  # type: ignore[call-overload]  # a kind is a str
        return cls(case_id, suite, target, stage=stage, status=Status.ERROR)

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
