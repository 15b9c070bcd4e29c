"""Did a run compile anything? Read from a results JSON's per-outcome `stage_times`.

The worker records `store` when the compiled module (or a cached failure) came from
the artifact store, `import` when it imported and `compile` when it compiled. A warm
run, after the artifact store was restored, must have store hits and nothing else.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class WarmCounts:
    outcomes: int = 0
    store: int = 0
    compiled: int = 0
    imported: int = 0
    no_compile_stage: int = 0  # skips, and cases that never reached the store lookup
    compiled_cases: list[str] = field(default_factory=list)
    by_status: Counter = field(default_factory=Counter)

    @property
    def warm(self) -> bool:
        return self.store > 0 and self.compiled == 0 and self.imported == 0

    def describe(self) -> str:
        return (
            f"{self.outcomes} outcomes: {self.store} from the artifact store, "
            f"{self.compiled} compiled, {self.imported} imported, "
            f"{self.no_compile_stage} without a compile stage (skips and the like); "
            f"statuses {dict(sorted(self.by_status.items()))}"
        )


def count_stages(results: Mapping[str, Any]) -> WarmCounts:
    counts = WarmCounts()
    for outcome in results.get("outcomes") or []:
        counts.outcomes += 1
        counts.by_status[str(outcome.get("status"))] += 1
        times = outcome.get("stage_times") or {}
        if "compile" in times:
            counts.compiled += 1
            counts.compiled_cases.append(str(outcome.get("case_id")))
        elif "import" in times:
            counts.imported += 1
            counts.compiled_cases.append(str(outcome.get("case_id")))
        elif "store" in times:
            counts.store += 1
        else:
            counts.no_compile_stage += 1
    return counts
