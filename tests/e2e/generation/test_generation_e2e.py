"""check-model on a folder saved by transformers' save_pretrained: a generation check
whose tokens are transformers' greedy generate's, and clear refusals of folders it cannot
check (no torch needed for those)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iree_conformance.cli.main import main


def _config(folder: Path, architectures: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"architectures": architectures}))


def test_a_folder_without_a_causal_lm_is_refused(tmp_path, capsys) -> None:
    _config(tmp_path / "bert", ["BertModel"])
    assert main(["check-model", str(tmp_path / "bert")]) == 2
    assert "causal language model" in capsys.readouterr().err


def test_a_pickled_checkpoint_is_not_loaded(tmp_path, capsys) -> None:
    folder = tmp_path / "pickled"
    _config(folder, ["LlamaForCausalLM"])
    (folder / "pytorch_model.bin").write_bytes(b"not loaded")
    assert main(["check-model", str(folder)]) == 2
    assert "pickled checkpoints are not loaded" in capsys.readouterr().err


def test_tokens_are_for_folders_only(tmp_path, capsys) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(b"")
    assert main(["check-model", str(model), "--tokens", "4"]) == 2
    assert (
        "--tokens, --prompt-ids and --prompt are for a causal LM folder" in capsys.readouterr().err
    )


def test_a_saved_model_generates_transformers_tokens_on_iree(tmp_path, capsys) -> None:
    """An architecture the suite does not hold (qwen3), saved with save_pretrained."""
    torch = pytest.importorskip("torch", reason="generation checks need torch")
    pytest.importorskip("iree.turbine", reason="generation checks need iree-turbine")
    transformers = pytest.importorskip("transformers", reason="generation checks need transformers")
    torch.manual_seed(0)
    config = transformers.Qwen3Config(
        vocab_size=96,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
    )
    folder = tmp_path / "qwen3-tiny"
    transformers.AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    out = tmp_path / "out.json"
    status = main(
        [
            "check-model",
            str(folder),
            "--tokens",
            "12",
            "--prompt-ids",
            "5,6,7",
            "--json",
            str(out),
            "--store-dir",
            str(tmp_path / "store"),
            "--no-benchmark",
        ]
    )
    printed = capsys.readouterr().out
    found = json.loads(out.read_text())["info"]["generation"]
    assert found["prompt_ids"] == [5, 6, 7]
    assert len(found["eager_tokens"]) == 12
    assert status == 0, printed
    assert found["iree_tokens"] == found["eager_tokens"]
    assert "verdict: pass" in printed
    # The reference is transformers' own greedy generate, computed here again.
    model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    ids = torch.tensor([[5, 6, 7]])
    again = model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        do_sample=False,
        max_new_tokens=12,
        min_new_tokens=0,
        eos_token_id=None,
        pad_token_id=0,
    )
    assert again[0, 3:].tolist() == found["eager_tokens"]


def test_the_folders_tokenizer_turns_a_text_prompt_into_ids_and_tokens_into_text(
    tmp_path, capsys
) -> None:
    torch = pytest.importorskip("torch", reason="generation checks need torch")
    pytest.importorskip("iree.turbine", reason="generation checks need iree-turbine")
    transformers = pytest.importorskip("transformers", reason="generation checks need transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = [f"w{i}" for i in range(64)]
    vocab = {w: i for i, w in enumerate(["[UNK]", *words])}
    raw = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]")
    torch.manual_seed(1)
    config = transformers.LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
    )
    folder = tmp_path / "llama-words"
    transformers.AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    out = tmp_path / "out.json"
    status = main(
        [
            "check-model",
            str(folder),
            "--tokens",
            "6",
            "--prompt",
            "w1 w2 w3",
            "--json",
            str(out),
            "--store-dir",
            str(tmp_path / "store"),
            "--no-benchmark",
        ]
    )
    printed = capsys.readouterr().out
    found = json.loads(out.read_text())["info"]["generation"]
    assert found["prompt_ids"] == [2, 3, 4], found
    assert status == 0, printed
    assert found["text"]["prompt"] == "w1 w2 w3"
    assert found["text"]["iree"] == tokenizer.decode(found["iree_tokens"])
    assert "IREE text:" in printed


def test_a_red_generation_check_gets_a_folder_that_iree_s_tools_alone_reproduce(tmp_path) -> None:
    """At atol 0 the float32 logits' last-bit differences are a numerics failure: its
    folder holds the failing function, the call's inputs and eager's outputs, and
    repro.sh, started as sh repro.sh, fails the same way."""
    import subprocess
    import sys

    pytest.importorskip("torch", reason="generation checks need torch")
    pytest.importorskip("iree.turbine", reason="generation checks need iree-turbine")
    pytest.importorskip("transformers", reason="generation checks need transformers")
    from iree_conformance.common.store import ArtifactStore
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.model.targets import load_targets
    from iree_conformance.repro.make import make_for_case
    from iree_conformance.suites.llm import GenerationCase

    conformance = Path(__file__).resolve().parents[3] / "conformance"
    target = load_targets(conformance / "targets.toml")["llvm-cpu"]
    config = {
        "model_type": "llama",
        "vocab_size": 64,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
    }
    case = GenerationCase(
        case_id="llm/exact",
        suite="llm",
        kind="mlir",
        source_path=conformance / "targets.toml",
        config=config,
        tokens=6,
        atol=0.0,
        rtol=0.0,
    )
    store = ArtifactStore(tmp_path / "store")
    worker = WorkerClient(store.root)
    try:
        outcome, _ = run_case(Attempt(case, target), worker)
    finally:
        worker.close()
    assert (outcome.status, outcome.stage) == ("fail", "compare"), outcome.diagnostics
    folder = tmp_path / "repro"
    record = make_for_case(case, target, outcome, folder, store, conformance)
    assert record["reproduced"] is True, record
    assert (folder / "input.mlir").is_file()
    tools = str(Path(sys.executable).parent)
    ran = subprocess.run(
        ["sh", "repro.sh"],
        cwd=folder,
        capture_output=True,
        text=True,
        env={"PATH": tools + ":/usr/bin:/bin"},
        timeout=600,
    )
    assert ran.returncode != 0
    assert "[FAILED]" in ran.stdout + ran.stderr
