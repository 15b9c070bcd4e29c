"""Forecast of a ccache class's size from measured bytes per object.

Inputs ([classes.NAME.forecast] in cache_tools.toml, or a live measurement):

  bytes_per_object   ccache folder bytes / cacheable compilations of a measured build
  objects            {os: compilations of the full build on that OS}
  measured           where the figures come from (shown with the forecast)

Output: per OS, objects x bytes per object, against the class's budget (max_share of the
repository limit, shared by the OS entries) and the whole limit, which every class and
OS shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .units import human_bytes


@dataclass(frozen=True)
class ForecastInputs:
    bytes_per_object: float
    objects: dict[str, int] = field(default_factory=dict)
    measured: str = ""


@dataclass(frozen=True)
class Forecast:
    inputs: ForecastInputs
    class_budget: int
    limit: int

    def per_os(self) -> dict[str, int]:
        return {
            os_name: int(round(count * self.inputs.bytes_per_object))
            for os_name, count in self.inputs.objects.items()
        }

    @property
    def total(self) -> int:
        return sum(self.per_os().values())

    @property
    def fits(self) -> bool:
        return self.total <= self.class_budget

    def to_json(self) -> dict[str, Any]:
        return {
            "bytes_per_object": round(self.inputs.bytes_per_object, 1),
            "objects": dict(self.inputs.objects),
            "bytes": self.per_os(),
            "total_bytes": self.total,
            "class_budget": self.class_budget,
            "limit": self.limit,
            "fits": self.fits,
            "measured": self.inputs.measured,
        }

    def lines(self) -> list[str]:
        per_os = self.per_os()
        out = [
            f"forecast: {human_bytes(self.inputs.bytes_per_object)} per object"
            + (f" ({self.inputs.measured})" if self.inputs.measured else "")
        ]
        for os_name, size in per_os.items():
            out.append(
                f"  {os_name:8} {self.inputs.objects[os_name]:>7} objects -> {human_bytes(size)}"
            )
        verdict = "fits" if self.fits else "does NOT fit"
        out.append(
            f"  all OSes {human_bytes(self.total)}: {verdict} the class budget "
            f"{human_bytes(self.class_budget)} ({self.total / self.limit:.0%} of the "
            f"{human_bytes(self.limit)} limit that every class shares)"
        )
        if not self.fits:
            out.append(
                "  -> keep the newest objects (ccache max_size evicts the oldest) or add a "
                "remote store for this class (docs/cache_tools.md)"
            )
        return out
