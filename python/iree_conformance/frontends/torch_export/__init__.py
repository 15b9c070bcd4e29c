"""PyTorch programs through IREE, checked against torch eager on the CPU.

``spec`` (how cases are written) and ``arrays`` need no torch; ``export`` and ``timing``
import it when called, so the rest of iree-conformance never needs torch installed.
"""

from iree_conformance.frontends.torch_export.spec import (
    DEFAULT_ATOL,
    DEFAULT_RTOL,
    TorchCase,
    case,
    module_case,
)

__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "TorchCase", "case", "module_case"]
