"""The runtime side of self-checking programs: a Python VM module that records checks.

``stablehlo_checks.instrument_checks`` turns every check op into a call of
``conformance_check.expect_<site>``. ``CheckRecorder`` exports those functions through
``iree.runtime.PyModuleInterface``; each call reads its values back to the host and
records ``(site, values)``. It records, never judges: the parent compares the records
with the site's rules (``suites/check_pairs.py``), the same rules as for any output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iree_conformance.frontends.stablehlo.checks import CHECK_MODULE
from iree_conformance.model.readback import staged_to_host

Record = tuple[int, list[np.ndarray]]


class CheckRecorder:
    """One check module for one loaded program; ``take()`` hands over the records so far."""

    def __init__(self, sites: list[dict[str, Any]], device, staged: bool = False):
        import iree.runtime as rt

        self._records: list[Record] = []
        iface = rt.PyModuleInterface(CHECK_MODULE, lambda _iface: None)
        for site in sites:
            iface.export(
                f"expect_{site['site']}",
                site["cconv"],
                _recorder(site["site"], self._records, device, staged),
            )
        self._iface = iface  # the interface must outlive the module it creates
        self.module = iface.create()

    def take(self) -> list[Record]:
        records = list(self._records)
        self._records.clear()
        return records


def _recorder(site: int, records: list[Record], device, staged: bool):
    """The export of one site. It holds no reference to the recorder, so that no cycle
    keeps the native module alive past the context. ``staged``: values are read through
    a staging copy (model/readback.py), as on Vulkan."""
    import iree.runtime as rt

    def to_host(value) -> np.ndarray:
        if isinstance(value, (int, float)):
            return np.asarray(value)
        view = value.deref(rt.HalBufferView)
        if staged:
            return staged_to_host(device, view)
        return np.array(rt.DeviceArray(device, view).to_host())

    def record(_state, *args) -> None:
        records.append((site, [to_host(a) for a in args]))

    return record
