"""The contract between the pytest process and its worker: what a job asks, what a
result answers. Jobs and results travel pickled (worker_main.py); everything here is a
plain dataclass of builtins and numpy arrays.

- ``CaseJob``: one case: import and compile its program (or take the batch module it
  was compiled into, ``batch_key``), load it and run its function on each input set.
- ``BatchJob``: import several cases' programs, merge and compile them as one module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, overload

import numpy as np

#: The import option of an ONNX model over protobuf's 2 GiB: its external data files'
#: [location, size, mtime_ns] (the model file alone does not say what its weights are,
#: and the store's import key must). Such a program is imported by iree-import-onnx
#: with its weights in a parameter file (frontends/onnx/large_import.py), runs alone,
#: never in a batch module.
LARGE_MODEL_OPTION = "onnx.large_model"
#: The import option of a user's ONNX model: where the harness upgraded its opset, IREE's
#: tools at their defaults are tried on it as given (frontends/onnx/bare_defaults.py).
BARE_CHECK_OPTION = "onnx.bare_defaults_check"

# (stage, "crash" | "hang" | "spin"): tests of crash/timeout handling. The stage "compiler"
# fires inside a case's compile, after its compile key is announced, as a compiler bug does.
Fault = tuple[str, str]


@dataclasses.dataclass(frozen=True)
class Program:
    """A case's program as the worker imports it."""

    case_id: str
    kind: str  # "mlir" or "onnx"
    source_path: str | None = None
    source_bytes: bytes | None = None
    import_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # The frontend that imports it (frontends/registry.py); None: the default of its kind.
    frontend: str | None = None


@dataclasses.dataclass(frozen=True)
class CaseJob:
    """Compile (or find) one case's module, load it and run its entry function."""

    program: Program
    compile_flags: tuple[str, ...]
    target: str
    driver: str
    device: str | None = None
    host_specific: bool = False
    entry_function: str | None = None  # None: "main", or the module's only function
    input_sets: tuple[list[np.ndarray], ...] = ()
    compile_only: bool = False
    timing_runs: int = 0
    # The most the figures may add, as a fraction of the case's untimed time; None: all
    # of them whatever they cost (--timing-budget full).
    timing_budget: float | None = 0.05  # common/timing.DEFAULT_TIMING_BUDGET
    # The seconds of the case's untimed run spent outside this job (its share of its
    # batch's import and compile), which the timing budget counts too.
    untimed_before_s: float = 0.0
    # With timing_runs: what the program's frontend times beside IREE
    # (Frontend.timing_reference): an ONNX file for onnxruntime, FILE::NAME of a JAX case.
    timed_reference: str | None = None
    bypass_store: bool = False  # a retry compiles afresh
    batch_key: str | None = None  # run in this compiled batch (Executor.compile_batch)
    batch_member: str | None = None  # its id in that batch (None: its own)
    alone: bool = False  # compile alone: never run in a batch module the store points to
    stage_timeouts: Mapping[str, float] = dataclasses.field(default_factory=dict)  # the target's
    fault: Fault | None = None

    @property
    def case_id(self) -> str:
        return self.program.case_id


@dataclasses.dataclass(frozen=True)
class BatchJob:
    """Import the members' programs, merge them and compile the merged module once."""

    members: tuple[Program, ...]
    compile_flags: tuple[str, ...]
    host_specific: bool = False
    bypass_store: bool = False
    stage_timeouts: Mapping[str, float] = dataclasses.field(default_factory=dict)  # the target's
    fault: Fault | None = None

    @property
    def case_id(self) -> str:
        return (
            f"batch of {len(self.members)} from {self.members[0].case_id}"
            if self.members
            else "empty batch"
        )


Job = CaseJob | BatchJob


@dataclasses.dataclass
class WorkerAnswer:
    """What every answer of the worker holds: how far it got and what it said."""

    status: str = "pass"  # pass | error | crash | timeout
    stage: str = "prepare"
    diagnostics: list[str] = dataclasses.field(default_factory=list)
    stage_times: dict[str, float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class CaseResult(WorkerAnswer):
    """What the worker answers for a CaseJob (or the parent, for a crash or timeout)."""

    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    outputs: list[list[np.ndarray]] | None = None  # one list per input set
    check_sites: list[dict[str, Any]] | None = None  # self-checking programs' sites
    check_records: list[list[tuple[int, list[np.ndarray]]]] | None = None  # per input set
    timing: dict[str, Any] | None = None  # common/timing.time_iree_call
    vmfb: bytes | None = None  # compile-only runs


@dataclasses.dataclass
class BatchResult(WorkerAnswer):
    """What the worker answers for a BatchJob."""

    stage: str = "compile"
    cache_hits: dict[str, bool] = dataclasses.field(default_factory=dict)
    batch_key: str | None = None
    placed: list[str] = dataclasses.field(default_factory=list)  # case ids in the module
    left_out: dict[str, str] = dataclasses.field(
        default_factory=dict
    )  # case id -> why (they run alone)
    culprits: list[str] = dataclasses.field(
        default_factory=list
    )  # case ids the compile errors named
    # case id -> (batch key, its id there, batch size): compiled in an earlier batch
    elsewhere: dict[str, tuple[str, str, int]] = dataclasses.field(default_factory=dict)


Result = CaseResult | BatchResult


@overload
def failed_result(
    job: CaseJob,
    status: str,
    stage: str,
    diagnostics: list[str],
    stage_times: dict[str, float] | None = None,
) -> CaseResult: ...
@overload
def failed_result(
    job: BatchJob,
    status: str,
    stage: str,
    diagnostics: list[str],
    stage_times: dict[str, float] | None = None,
) -> BatchResult: ...


def failed_result(
    job: Job,
    status: str,
    stage: str,
    diagnostics: list[str],
    stage_times: dict[str, float] | None = None,
) -> Result:
    """The result of a job that did not answer (a crash, a timeout, a Python error)."""
    result_type = BatchResult if isinstance(job, BatchJob) else CaseResult
    return result_type(
        status=status, stage=stage, diagnostics=diagnostics, stage_times=dict(stage_times or {})
    )
