"""The one exception of the worker's stages."""

from __future__ import annotations

from iree_conformance.common.diagnostics import first_meaningful_lines


class StageError(Exception):
    """A clean failure of one stage; the message holds the diagnostics."""

    def __init__(
        self,
        stage: str,
        message: str,
        lines: list[str] | None = None,
        cached: bool = False,
        crashed: bool = False,
    ):
        super().__init__(message)
        self.stage = stage
        self.lines = lines or first_meaningful_lines(message)
        self.cached = cached  # a failure read from the store, not a new one
        # A compiler crash read from the store (recorded by the parent when the compile
        # killed the worker): the case's status is crash, as it was then.
        self.crashed = crashed

    def machine_fault(self) -> str | None:
        """The machine's fault behind this failure (``common/machine_faults``), or None;
        never for a failure read from the store."""
        from iree_conformance.common.machine_faults import reason

        return None if self.cached else reason("\n".join([str(self), *self.lines]))
