"""The generation check's verdict on token lists and per-step logits (no torch needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iree_conformance.frontends.generation.child import compare
from iree_conformance.frontends.generation.spec import GenerationSpec, is_causal_lm_folder

SPEC = GenerationSpec(config={"model_type": "llama"})


def _logits(winners: list[int], vocab: int = 8, margin: float = 2.0) -> list[np.ndarray]:
    steps = []
    for w in winners:
        row = np.zeros(vocab, np.float32)
        row[w] = margin
        steps.append(row)
    return steps


def test_the_same_tokens_and_logits_pass() -> None:
    tokens = [1, 2, 3]
    status, lines, info = compare(SPEC, (tokens, _logits(tokens)), (tokens, _logits(tokens)))
    assert (status, lines) == ("pass", [])
    assert info["max_logit_diff_per_step"] == [0.0, 0.0, 0.0]


def test_a_different_token_names_the_step_the_difference_and_eagers_margin() -> None:
    eager, iree = [1, 2, 3], [1, 5, 3]
    status, lines, info = compare(SPEC, (eager, _logits(eager)), (iree, _logits(iree)))
    assert status == "fail"
    assert lines[0].startswith("tokens differ at step 1: eager 2, IREE 5")
    assert "top-2 margin 2" in lines[0]
    assert info["first_diff_step"] == 1
    assert len(info["max_logit_diff_per_step"]) == 2  # steps after the divergence: not compared


def test_a_divergence_at_a_near_tie_in_eager_is_not_iree_s_fault() -> None:
    eager_logits = _logits([1, 2])
    eager_logits[1][5] = 2.0 - 1e-6  # token 5 all but ties with token 2
    iree_logits = [row.copy() for row in eager_logits]
    iree_logits[1][5] += 2e-6  # within tolerance, yet it wins
    status, lines, info = compare(SPEC, ([1, 2], eager_logits), ([1, 5], iree_logits))
    assert (status, lines) == ("pass", [])
    assert "near-tie" in info["note"]


def test_logits_outside_the_tolerance_fail_though_the_tokens_agree() -> None:
    tokens = [1, 2]
    iree_logits = _logits(tokens)
    iree_logits[1][0] += 0.5
    status, lines, _ = compare(SPEC, (tokens, _logits(tokens)), (tokens, iree_logits))
    assert status == "fail"
    assert lines == ["step 1: logits differ by 0.5 (atol 0.0001, rtol 0.0001)"]


def test_a_spec_round_trips_and_refuses_nonsense() -> None:
    spec = GenerationSpec(folder="/m", prompt_ids=(1, 2), tokens=4, compile_flags=("--x",))
    assert GenerationSpec.from_json(spec.to_json()) == spec
    with pytest.raises(ValueError, match="a config or a folder"):
        GenerationSpec()
    with pytest.raises(ValueError, match="at least 1"):
        GenerationSpec(folder="/m", tokens=0)


def test_a_causal_lm_folder_is_told_from_other_folders(tmp_path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    assert is_causal_lm_folder(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    assert not is_causal_lm_folder(tmp_path)
    (tmp_path / "config.json").write_text("[")
    assert not is_causal_lm_folder(tmp_path)
    assert not is_causal_lm_folder(tmp_path / "absent")
