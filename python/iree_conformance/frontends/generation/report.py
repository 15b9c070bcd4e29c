"""What check-model prints of a generation check (standard library only)."""

from __future__ import annotations

import statistics
from typing import Any

from iree_conformance.common.stats import benchee_table, summarize


def generation_lines(info: dict[str, Any]) -> list[str]:
    """The route, the prompt, both token lists, the worst step, and the speed table."""
    found = info.get("generation")
    if not isinstance(found, dict):
        return []
    lines = [f"route: {found.get('route')} ({found.get('preparation', '?')} preparation)"]
    if "prompt_ids" in found:
        lines.append(f"prompt ids: {found['prompt_ids']}")
    for side, key in (("transformers generate", "eager_tokens"), ("IREE", "iree_tokens")):
        if key in found:
            lines.append(f"{side + ':':<22}{found[key]}")
    text = found.get("text")
    if isinstance(text, dict):  # the folder's tokenizer decoded them
        for side, key in (
            ("prompt", "prompt"),
            ("transformers text", "eager"),
            ("IREE text", "iree"),
        ):
            lines.append(f"{side + ':':<22}{text.get(key)!r}")
    if "max_logit_diff" in found:
        lines.append(
            f"largest logit difference over the steps compared: {found['max_logit_diff']:.3g}"
        )
    if found.get("note"):
        lines.append(f"note: {found['note']}")
    timing = found.get("timing")
    if isinstance(timing, dict) and timing.get("samples_s"):
        samples = timing["samples_s"]
        lines.append("")
        lines += benchee_table({name: summarize(s) for name, s in samples.items()})
        prompt = int(timing.get("prompt_tokens", 1))
        per_s = {
            name: (prompt if name.startswith("prefill") else 1) / statistics.median(s)
            for name, s in samples.items()
        }
        lines.append(
            "tokens/s (medians): "
            + ", ".join(f"{name} {rate:.1f}" for name, rate in per_s.items())
            + f" (prefill of {prompt} tokens; rounds interleaved)"
        )
    return lines
