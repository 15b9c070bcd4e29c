"""Another preparation of a case's program, compiled beside a failing one.

A frontend that prepares programs one way (torch: iree-turbine's decompositions) can name
another (torch's core ATen decompositions). When the case fails at import or compile, the
engine imports and compiles (never runs) the other one (``engine/preparations.py``): its
result is information in the Outcome, never the verdict, which stays the one of IREE's
own preparation.
"""

from __future__ import annotations

import dataclasses

from iree_conformance.model.jobs import Program


@dataclasses.dataclass(frozen=True)
class OtherPreparation:
    used: str  # the case's own preparation, e.g. "iree-turbine's decompositions"
    other: str  # the one tried beside it, e.g. "torch's core decompositions"
    program: Program | None  # None: the other preparation itself failed (``error`` says how)
    error: str = ""
