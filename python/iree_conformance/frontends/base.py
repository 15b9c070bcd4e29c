"""The Frontend contract: what an input format gives the worker (``registry.py`` lists
the frontends; the worker's importer looks one up there)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from iree_conformance.model.jobs import Program


class FrontendError(Exception):
    """A clean failure of a frontend at one stage ("prepare" or "import")."""

    def __init__(self, stage: str, message: str):
        super().__init__(message)
        self.stage = stage


@dataclasses.dataclass(frozen=True)
class ImportContext:
    """What the worker lends a frontend while it imports."""

    stage: Callable[[str], None]  # announce a stage ("prepare", "import") as it starts
    mlir_context: Callable[[], Any]  # the compiler's MLIR context (for parsing MLIR)
    read_diagnostics: Callable[[], str]  # what the compiler printed since the job began
    # Where a frontend writes a large artifact beside the MLIR (an ONNX model's parameter
    # file): the store's folder for them, so that keeping one is a rename; None: the
    # system's temporary folder.
    work_dir: Path | None = None


@dataclasses.dataclass(frozen=True)
class TimingReference:
    """What a frontend times beside IREE (``--benchmark``): the reference's call, ready to
    run, and what to record of it. ``entry`` and ``inputs``, when given, are the IREE
    function and arguments that compute the same thing (a JAX case's ``main`` on the
    case's arguments, rather than its self-checking ``check_xla``)."""

    name: str  # "onnxruntime", "xla"
    info: dict[str, Any]  # version and settings, recorded with the figures
    call: Callable[[], object]
    entry: str | None = None
    inputs: list[Any] | None = None
    # The seconds of the first call, when the frontend made it (to check the inputs);
    # else the worker makes it, as the reference's warm-up.
    first_call_s: float | None = None


@runtime_checkable
class Frontend(Protocol):
    """One input format."""

    @property
    def name(self) -> str:
        """The registry key: "onnx"."""

    @property
    def kind(self) -> str:
        """The source format of its programs (``Program.kind``: "onnx" or "mlir"), which
        also picks a target's ``kind_flags``."""

    def importer_version(self) -> str:
        """What besides the source shapes the imported MLIR (a converter's version), for
        the store's import key; "" when nothing does."""

    def prepare_and_import(
        self, program: Program, source: bytes, context: ImportContext
    ) -> tuple[bytes, dict[str, Any]]:
        """(MLIR text, import metadata); raises FrontendError on a clean failure."""

    def timing_reference(self, reference: str, inputs: list[Any]) -> TimingReference | None:
        """The reference timed beside IREE for a job's ``timed_reference`` (an ONNX file,
        a JAX case), on the case's inputs; None when this format has none. Raises when
        the reference cannot run (the case keeps IREE's figures and says why)."""
