"""What a case is: a program, how to get its inputs, and how to get its expected outputs."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from iree_conformance.common.unicode_text import valid_text
from iree_conformance.model.compare import Check, Tolerance
from iree_conformance.model.jobs import CaseResult, Program
from iree_conformance.model.preparation import OtherPreparation

ONNX_KEEP_F64 = "--iree-input-demote-f64-to-f32=false"

__all__ = [
    "Case",
    "CaseInvalid",
    "CaseReferenceError",
    "CaseSkipped",
    "CaseTimedOut",
    "Check",
    "ChecksFailed",
]


class CaseSkipped(Exception):
    """Raised while preparing a case that cannot run here (offline, unsupported IO)."""


class CaseInvalid(Exception):
    """Raised while preparing a case that stands for a broken corpus (a folder without
    tests): an ``error`` Outcome with this message alone."""


class CaseTimedOut(Exception):
    """Raised while preparing a case whose preparation ran past its time limit (a torch
    case's export): a ``timeout`` Outcome at ``prepare`` with this message."""


class CaseReferenceError(Exception):
    """Raised while preparing a case whose reference cannot judge IREE (no input shapes
    give onnxruntime a usable answer): an ``error`` Outcome at the ``reference`` stage
    whose message says what to specify. IREE is not asked."""


class ChecksFailed(Exception):
    """Raised by ``Case.checks`` of a case that judges its own output (FileCheck): a
    ``fail`` Outcome with these diagnostic lines."""

    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclasses.dataclass
class Case:
    """A program plus its data. Suites subclass it to supply inputs and references."""

    case_id: str
    suite: str
    kind: str  # "mlir" or "onnx"
    source_path: Path | None = None
    source_bytes: bytes | None = None
    entry_function: str | None = None  # None: "main", or the module's only function
    import_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    input_type: str = "auto"
    tolerance: Tolerance = Tolerance()
    skip_reason: str | None = None
    reference_name: str = "shipped"
    # May share a compiled module with other cases (batching.py): small programs whose
    # compile is mostly the compiler's fixed cost. Models stay alone.
    batchable: ClassVar[bool] = False

    def __post_init__(self) -> None:
        # a file name of bytes that are not UTF-8: written out, so every writer can encode it
        self.case_id = valid_text(self.case_id)

    def skip_reason_for(self, target: Any) -> str | None:
        """Why the case does not run on this target (a RUN line for another backend)."""
        return self.skip_reason

    def input_sets(self) -> list[list[np.ndarray]]:
        """Each set is one invocation of the entry function."""
        return [[]]

    def expected_sets(self, input_sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        raise NotImplementedError

    def outcome_info(self) -> dict[str, Any]:
        """Fields for the Outcome's ``info`` once the inputs are made (``inputs``: the
        shapes, seed and rules of chosen inputs, see ``onnx.model_inputs``)."""
        return {}

    def users_program(self) -> bool:
        """A program a user gave (a model, a ``--torch-dir`` or ``--jax-dir`` case, a .pt2):
        each step the harness took beyond it is shown beside its verdict
        (``model/preparation.preparation_steps``)."""
        return False

    def unjudged_reason(self) -> str | None:
        """Why a run-stage failure on these inputs is no verdict (random values of an
        input whose values carry meaning); None when it is one."""
        return None

    def other_preparation(self, stage: str) -> OtherPreparation | None:
        """Another preparation of the program, imported and compiled when this one fails
        at ``stage`` (import or compile): information beside the verdict
        (``engine/preparations.py``). None: the case has no other."""
        return None

    def run_itself(
        self, target: Any, store_dir: Path | None, compile_only: bool
    ) -> CaseResult | None:
        """The answer of a case that runs IREE itself, in a process of its own, rather than
        as one worker job (a generation check: two functions called step by step, the KV
        cache carried between calls); None: the worker runs it."""
        return None

    def own_reproducer(self) -> dict[str, Any] | None:
        """A case that runs itself gives its reproducer's parts here after a failure
        (``mlir``, ``inputs``, ``expected``, ``notes``); None: the store's and the
        case's program make it (``repro/source.py``)."""
        return None

    def program(self) -> Program:
        """The program as the worker imports it."""
        return Program(
            self.case_id,
            self.kind,
            str(self.source_path) if self.source_path else None,
            self.source_bytes,
            dict(self.import_options),
        )

    def checks(
        self,
        input_sets: list[list[np.ndarray]],
        output_sets: list[list[np.ndarray]],
        worker_result: CaseResult,
    ) -> list[Check]:
        """The reference stage: pairs what ran with what was expected."""
        expected = self.expected_sets(input_sets)
        if len(expected) != len(output_sets):
            raise ValueError(f"{len(expected)} expected output sets for {len(output_sets)} runs")
        return [
            Check(list(out), list(exp), tol)
            for out, exp, tol in zip(output_sets, expected, self.set_tolerances(len(output_sets)))
        ]

    def set_tolerances(self, count: int) -> list[Tolerance]:
        """The tolerance of each input set's comparison."""
        return [self.tolerance] * count

    def compile_flags(self, target_flags: tuple[str, ...]) -> list[str]:
        return [*target_flags, f"--iree-input-type={self.input_type}"]

    def timed_reference(self) -> str | None:
        """What the case's frontend times beside IREE with ``--benchmark``
        (``CaseJob.timed_reference``): its ONNX file when onnxruntime is its reference."""
        if self.reference_name == "onnxruntime" and self.source_path is not None:
            return str(self.source_path)
        return None

    def source_location(self) -> dict[str, Any] | None:
        """Where the case is written, ``{"path", "line"}``, for the annotation of an
        unexpected result (``Outcome.info["source"]``; a failing check op's own line,
        more precise, replaces ``line``: engine/after_run.py)."""
        if self.source_path is None:
            return None
        return {"path": str(self.source_path), "line": self.source_line()}

    def source_line(self) -> int:
        """The line the case starts at in its source file (1: the file itself)."""
        return 1


@dataclasses.dataclass
class NpzCase(Case):
    """Inputs ``input_i`` and expected outputs ``expected_i`` from one .npz file."""

    data_path: Path | None = None
    batchable: ClassVar[bool] = True

    def _arrays(self, prefix: str) -> list[np.ndarray]:
        assert self.data_path is not None
        with np.load(self.data_path) as data:
            count = sum(1 for k in data.files if k.startswith(prefix))
            return [data[f"{prefix}{i}"] for i in range(count)]

    def input_sets(self) -> list[list[np.ndarray]]:
        return [self._arrays("input_")]

    def expected_sets(self, input_sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        return [self._arrays("expected_")]
