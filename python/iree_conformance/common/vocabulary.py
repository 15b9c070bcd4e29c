"""The conformance run's vocabulary: stages, statuses, expectation kinds, verdicts, and
the ``target:case`` key.

Standard library only (``ci/`` scripts import it before the project is installed). Each
is a ``StrEnum``: a member equals its string (``Status.PASS == "pass"``), so results
files, manifests and the worker's messages keep plain strings.
"""

from __future__ import annotations

import dataclasses
import sys
from enum import Enum

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10: the same behaviour, for members given their strings explicitly

    class StrEnum(str, Enum):
        """A str whose members are also enum members; str() and format() give the value."""

        def __str__(self) -> str:
            return str(self.value)

        def __format__(self, spec: str) -> str:
            return str(self.value).__format__(spec)


class Stage(StrEnum):
    """A pipeline stage, in the order a case goes through them (``Outcome.stage``)."""

    PREPARE = "prepare"
    IMPORT = "import"
    COMPILE = "compile"
    LOAD = "load"
    RUN = "run"
    REFERENCE = "reference"
    COMPARE = "compare"


class Status(StrEnum):
    """What happened at that stage (``Outcome.status``)."""

    PASS = "pass"  # every comparison within tolerance
    FAIL = "fail"  # numerics or shapes differ at compare
    ERROR = "error"  # a stage raised a clean error
    CRASH = "crash"  # the worker process died
    TIMEOUT = "timeout"  # a stage ran past its limit
    SKIP = "skip"  # cannot run here: unsupported IO, offline, target absent


class ExpectationKind(StrEnum):
    """A kind of failure a manifest may list, in the order a case reaches them."""

    FAIL_PREPARE = "fail-prepare"
    FAIL_IMPORT = "fail-import"
    FAIL_COMPILE = "fail-compile"
    FAIL_RUN = "fail-run"
    FAIL_REFERENCE = "fail-reference"
    FAIL_NUMERICS = "fail-numerics"
    CRASH = "crash"
    TIMEOUT = "timeout"


class Verdict(StrEnum):
    """An Outcome judged against the manifest (``Outcome.verdict``)."""

    PASS = "pass"
    XFAIL = "xfail"  # the listed failure
    FLAKY = "flaky"  # one of a flaky case's listed results: never red, never a pass
    FAIL = "fail"  # unexpected: red
    XPASS = "xpass"  # listed, but passed: red (strict)
    SKIP = "skip"


STAGE_ORDER: tuple[Stage, ...] = tuple(Stage)
STATUSES: tuple[Status, ...] = tuple(Status)
EXPECTATION_KINDS: tuple[ExpectationKind, ...] = tuple(ExpectationKind)
VERDICTS: tuple[Verdict, ...] = tuple(Verdict)
#: The statuses of a case that did not pass (every one but pass and skip).
FAILING_STATUSES: tuple[Status, ...] = (Status.FAIL, Status.ERROR, Status.CRASH, Status.TIMEOUT)
#: The verdicts that turn a run red.
RED_VERDICTS: tuple[Verdict, ...] = (Verdict.FAIL, Verdict.XPASS)


@dataclasses.dataclass(frozen=True, order=True)
class CaseKey:
    """One case on one target: ``str()`` gives "target:case_id" (the key of durations,
    flake reports and bundles); ``parse`` reads it back. Target names hold no ":", case
    ids may (``stablehlo-ext/x.mlir:func``), so the first ":" separates them."""

    target: str
    case_id: str

    def __str__(self) -> str:
        return f"{self.target}:{self.case_id}"

    @classmethod
    def parse(cls, text: str) -> CaseKey:
        target, sep, case_id = text.partition(":")
        if not sep or not target or not case_id:
            raise ValueError(f"{text!r} is not a target:case key")
        return cls(target, case_id)

    @classmethod
    def of(cls, outcome: dict) -> CaseKey:
        """The key of an Outcome as JSON (a results file's entry)."""
        return cls(str(outcome["target"]), str(outcome["case_id"]))
