"""What one generation check runs (standard library only: the parent never imports torch)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

DEFAULT_TOKENS = 32
DEFAULT_PROMPT_LENGTH = 8
# Logits within this of eager's at every step compared (float32 on the CPU: 1e-7 seen).
DEFAULT_ATOL = 1e-4
DEFAULT_RTOL = 1e-4


@dataclasses.dataclass(frozen=True)
class GenerationSpec:
    """One check: a model (a transformers config's fields, or a ``save_pretrained``
    folder), the prompt, how many tokens, and where IREE compiles and runs it."""

    config: dict[str, Any] | None = None  # {"model_type": "llama", ...}: built seeded
    folder: str | None = None  # a save_pretrained folder (config.json and safetensors)
    seed: int = 0
    prompt_ids: tuple[int, ...] | None = None  # None: seeded ids within the vocabulary
    prompt: str | None = None  # text, for a folder with a tokenizer (ids win when both)
    tokens: int = DEFAULT_TOKENS
    compile_flags: tuple[str, ...] = ()
    device: str = "local-task"
    store_dir: str | None = None
    iree_build: str = ""  # the compiler's identity, part of the store key (build_identity)
    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    timing: bool = False  # tokens per second, IREE and torch eager, interleaved
    compile_only: bool = False  # stop once both functions compile (GPU targets here)

    def __post_init__(self) -> None:
        if (self.config is None) == (self.folder is None):
            raise ValueError("a generation check needs a config or a folder, not both")
        if self.tokens < 1:
            raise ValueError(f"tokens must be at least 1, not {self.tokens}")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> GenerationSpec:
        data = json.loads(text)
        if data.get("prompt_ids") is not None:
            data["prompt_ids"] = tuple(int(i) for i in data["prompt_ids"])
        data["compile_flags"] = tuple(data.get("compile_flags", ()))
        return cls(**data)


def is_causal_lm_folder(path: Path) -> bool:
    """A ``save_pretrained`` folder of a decoder-only language model: config.json names an
    architecture ending in ``ForCausalLM`` (or ``LMHeadModel``) and safetensors are there."""
    config = path / "config.json"
    if not path.is_dir() or not config.is_file():
        return False
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    arches = data.get("architectures") if isinstance(data, dict) else None
    if not isinstance(arches, list):
        return False
    return any(
        isinstance(a, str) and (a.endswith("ForCausalLM") or a.endswith("LMHeadModel"))
        for a in arches
    )
