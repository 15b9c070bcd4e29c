"""The generation check itself, in a child process of its own (``check.py`` starts it):
torch, transformers and IREE's runtime live here, and a crash or a hang of IREE ends this
process, not the caller's.

The route (docs/generation.md): the model's forward wrapped twice, a prefill (the prompt,
its length dynamic) and a decode step (one token, its position, and the KV cache passed in
and returned, its length dynamic), each exported with ``torch.export`` and prepared as the
torch suite prepares every program (iree-turbine's AOT decompositions, then its FX
importer), compiled once by IREE; then greedy decoding on IREE for N tokens against
transformers' ``generate(do_sample=False)`` from the same prompt ids, with no logits
processor on either side.

Usage: ``python -m iree_conformance.frontends.generation.child SPEC.json OUT_DIR``; writes
``OUT_DIR/stage`` as each stage starts and ``OUT_DIR/result.json`` at the end.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.frontends.generation.spec import GenerationSpec

ROUTE = "prefill+decode, KV cache passed in and returned (dynamic lengths)"


class _Done(Exception):
    """Compile-only: nothing runs."""


class StageFailed(Exception):
    def __init__(self, stage: str, message: str):
        super().__init__(message)
        self.stage = stage


def _first_lines(text: str, count: int = 6) -> str:
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    return "\n".join(lines[:count]) or "(no message)"


def _reason(e: BaseException) -> str:
    return f"{type(e).__name__}: {_first_lines(str(e))}"


class Progress:
    def __init__(self, out: Path):
        self.out = out
        self.stage: str = Stage.PREPARE
        self.times: dict[str, float] = {}
        self._t = time.perf_counter()

    def enter(self, stage: str) -> None:
        now = time.perf_counter()
        self.times[self.stage] = self.times.get(self.stage, 0.0) + now - self._t
        self.stage, self._t = stage, now
        (self.out / "stage").write_text(stage, encoding="utf-8", newline="\n")


def load_model(spec: GenerationSpec) -> Any:
    import torch
    import transformers

    torch.manual_seed(spec.seed)
    if spec.folder is not None:
        # Safetensors only: a pickled checkpoint (pytorch_model.bin) would run code.
        return transformers.AutoModelForCausalLM.from_pretrained(
            spec.folder, local_files_only=True, use_safetensors=True, dtype=torch.float32
        ).eval()
    fields = dict(spec.config or {})
    model_type = fields.pop("model_type")
    config = transformers.AutoConfig.for_model(model_type, **fields)
    return transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()


DEFAULT_PROMPT = "The quick brown fox"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")


def tokenizer_of(spec: GenerationSpec) -> Any:
    """The folder's own tokenizer, when it has one (None otherwise): nothing downloaded,
    no remote code."""
    if spec.folder is None or not any((Path(spec.folder) / f).is_file() for f in TOKENIZER_FILES):
        return None
    import transformers

    try:
        return transformers.AutoTokenizer.from_pretrained(
            spec.folder, local_files_only=True, trust_remote_code=False
        )
    except Exception as e:  # noqa: BLE001 - a broken tokenizer is the folder's problem
        raise StageFailed(
            Stage.PREPARE, f"cannot load the folder's tokenizer: {_reason(e)}"
        ) from None


def prompt_ids(spec: GenerationSpec, vocab: int, tokenizer: Any = None) -> Any:
    import torch

    if spec.prompt_ids is None and tokenizer is not None:
        ids = tokenizer(spec.prompt or DEFAULT_PROMPT)["input_ids"]
        return torch.tensor([list(ids)], dtype=torch.int64)
    if spec.prompt_ids is not None:
        bad = [i for i in spec.prompt_ids if not 0 <= i < vocab]
        if bad:
            raise StageFailed(
                Stage.PREPARE, f"prompt ids {bad[:5]} are outside the vocabulary (0..{vocab - 1})"
            )
        return torch.tensor([list(spec.prompt_ids)], dtype=torch.int64)
    if spec.prompt is not None:
        raise StageFailed(
            Stage.PREPARE, "a text prompt needs a tokenizer in the folder: give --prompt-ids"
        )
    generator = torch.Generator().manual_seed(spec.seed)
    return torch.randint(0, vocab, (1, 8), generator=generator, dtype=torch.int64)


def _cache_tensors(cache: Any) -> list[Any]:
    flat: list[Any] = []
    for layer in cache.layers:
        flat += [layer.keys, layer.values]
    return flat


def wrappers(model: Any) -> tuple[Any, Any]:
    import torch
    from transformers import DynamicCache

    config = model.config

    class Prefill(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids: Any) -> Any:
            out = self.model(input_ids=ids, use_cache=True, cache=DynamicCache(config=config))
            return (out.logits[:, -1, :], *_cache_tensors(out.past_key_values))

    class Decode(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids: Any, position: Any, *kv: Any) -> Any:
            cache = DynamicCache(config=config)
            for layer in range(len(kv) // 2):
                cache.update(kv[2 * layer], kv[2 * layer + 1], layer)
            out = self.model(input_ids=ids, position_ids=position, use_cache=True, cache=cache)
            return (out.logits[:, -1, :], *_cache_tensors(out.past_key_values))

    return Prefill().eval(), Decode().eval()


def export_pair(model: Any, ids: Any) -> tuple[Any, Any]:
    import torch

    prefill, decode = wrappers(model)
    seq = torch.export.Dim.DYNAMIC
    try:
        with torch.no_grad():
            pre = torch.export.export(prefill, (ids,), dynamic_shapes=({1: seq},))
            first = prefill(ids)
            kv = tuple(first[1:])
            position = torch.tensor([[ids.shape[1]]], dtype=torch.int64)
            token = first[0].argmax(-1, keepdim=True)
            dyn = (None, None, tuple({2: torch.export.Dim.DYNAMIC} for _ in kv))
            dec = torch.export.export(decode, (token, position, *kv), dynamic_shapes=dyn)
    except Exception as e:  # noqa: BLE001 - torch.export's failure: no verdict on IREE
        raise StageFailed(
            "prepare", f"torch.export cannot export the route: {_reason(e)}"
        ) from None
    return pre, dec


def prepare(program: Any) -> tuple[str, str]:
    from iree_conformance.frontends.torch_export.export import ExportError
    from iree_conformance.frontends.torch_export.export import prepare as prepare_program

    try:
        text, info = prepare_program(program)
    except ExportError as e:
        # The FX importer's message carries the node's whole metadata: keep its target.
        lines = [line.split(", {'stack_trace'")[0] for line in str(e).splitlines()]
        raise StageFailed(e.stage, "\n".join(lines)) from None
    return text, str(info.get("preparation"))


def compile_module(mlir: str, spec: GenerationSpec, cache_hits: dict[str, bool]) -> bytes:
    from iree_conformance.common.store import ArtifactStore, make_key

    store = ArtifactStore(Path(spec.store_dir) if spec.store_dir else None)
    key = make_key(
        "generation-module",
        "2",
        hashlib.sha256(mlir.encode()).digest(),
        json.dumps(list(spec.compile_flags)),
        spec.iree_build,
    )
    stored = store.get("generation", key)
    if stored is not None:
        cache_hits[Stage.COMPILE] = True
        return stored[1]
    cache_hits[Stage.COMPILE] = False
    from iree.compiler import CompilerToolError, compile_str

    try:
        vmfb = compile_str(mlir, extra_args=list(spec.compile_flags))
    except CompilerToolError as e:
        errors = [line for line in str(e).splitlines() if "error:" in line]
        raise StageFailed(Stage.COMPILE, "\n".join(errors[:4]) or _first_lines(str(e))) from None
    store.put("generation", key, vmfb)
    return bytes(vmfb)


class IreeFunction:
    def __init__(self, vmfb: bytes, device: str):
        import iree.runtime as rt

        self.config = rt.Config(device)
        module = rt.VmModule.copy_buffer(self.config.vm_instance, vmfb)
        context = rt.SystemContext(config=self.config)
        context.add_vm_module(module)
        self.main = context.modules.module.main

    def __call__(self, *args: np.ndarray) -> list[np.ndarray]:
        outputs = self.main(*args)
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        return [np.asarray(o.to_host()) for o in outputs]


def eager_generate(model: Any, ids: Any, tokens: int) -> tuple[list[int], list[np.ndarray]]:
    """Greedy tokens and the raw logits of each step from transformers' own generate, with
    a fresh generation config: no end-of-sequence stop and no logits processor (a saved
    generation_config.json's repetition penalty or min_new_tokens would change the tokens)."""
    import torch
    from transformers import GenerationConfig

    config = GenerationConfig(
        do_sample=False,
        max_new_tokens=tokens,
        min_new_tokens=0,
        eos_token_id=None,
        pad_token_id=0,
        output_logits=True,
        return_dict_in_generate=True,
    )
    with torch.no_grad():
        out = model.generate(ids, generation_config=config, attention_mask=torch.ones_like(ids))
    new = out.sequences[0, ids.shape[1] :].tolist()
    logits = [step[0].float().numpy().copy() for step in out.logits]
    return new, logits


def iree_generate(
    prefill: IreeFunction, decode: IreeFunction, ids: np.ndarray, tokens: int
) -> tuple[list[int], list[np.ndarray]]:
    outputs = prefill(ids)
    logits, kv = outputs[0], outputs[1:]
    produced: list[int] = []
    step_logits = [logits[0].astype(np.float32)]
    position = ids.shape[1]
    for _ in range(tokens):
        token = int(np.argmax(logits[0]))
        produced.append(token)
        if len(produced) == tokens:
            break
        outputs = decode(
            np.array([[token]], dtype=np.int64), np.array([[position]], dtype=np.int64), *kv
        )
        logits, kv = outputs[0], outputs[1:]
        step_logits.append(logits[0].astype(np.float32))
        position += 1
    return produced, step_logits


def compare(
    spec: GenerationSpec,
    eager: tuple[list[int], list[np.ndarray]],
    iree: tuple[list[int], list[np.ndarray]],
) -> tuple[str, list[str], dict[str, Any]]:
    """(status, diagnostics, info): the same tokens and every step's logits within the
    tolerance, or the first step that differs. Steps after a divergence see other
    prefixes: they are not compared."""
    eager_tokens, eager_logits = eager
    iree_tokens, iree_logits = iree
    info: dict[str, Any] = {"eager_tokens": eager_tokens, "iree_tokens": iree_tokens}
    diffs: list[float] = []
    first_diff = next(
        (i for i, (a, b) in enumerate(zip(eager_tokens, iree_tokens)) if a != b), None
    )
    last = len(eager_tokens) if first_diff is None else first_diff + 1
    messages: list[str] = []
    for step in range(last):
        e, i = eager_logits[step].astype(np.float64), iree_logits[step].astype(np.float64)
        diff = float(np.max(np.abs(e - i)))
        diffs.append(diff)
        if not np.allclose(i, e, atol=spec.atol, rtol=spec.rtol) and not messages:
            info["failing_step"] = step
            messages.append(
                f"step {step}: logits differ by {diff:.3g} (atol {spec.atol:g}, rtol {spec.rtol:g})"
            )
    info["max_logit_diff_per_step"] = diffs
    if first_diff is not None:
        top2 = np.sort(eager_logits[first_diff].astype(np.float64))[-2:]
        margin = float(top2[1] - top2[0])
        info.update(first_diff_step=first_diff, eager_top2_margin=margin)
        line = (
            f"tokens differ at step {first_diff}: eager {eager_tokens[first_diff]}, "
            f"IREE {iree_tokens[first_diff]}; logits differ there by {diffs[first_diff]:.3g}, "
            f"eager's top-2 margin {margin:.3g}"
        )
        if margin <= diffs[first_diff] and not messages:
            info["note"] = (
                f"{line}: a near-tie in eager (its margin is within the logits' difference), "
                "not IREE's fault; the steps after it are not compared"
            )
            return Status.PASS, [], info
        messages.insert(0, line)
        info["failing_step"] = min(info.get("failing_step", first_diff), first_diff)
    return (Status.FAIL if messages else Status.PASS), messages, info


def step_call(
    prefill: IreeFunction, decode: IreeFunction, ids: np.ndarray, tokens: list[int], step: int
) -> tuple[str, list[np.ndarray]]:
    """The function and inputs of the call that made step ``step``'s logits on IREE (the
    cache IREE itself returned), replayed from the prompt."""
    if step == 0:
        return "prefill", [ids]
    kv = prefill(ids)[1:]
    position = ids.shape[1]
    for s in range(1, step + 1):
        inputs = [
            np.array([[tokens[s - 1]]], dtype=np.int64),
            np.array([[position]], dtype=np.int64),
            *kv,
        ]
        if s == step:
            break
        kv = decode(*inputs)[1:]
        position += 1
    return "decode", inputs


def write_repro(
    out: Path,
    mlir: dict[str, str],
    which: str,
    inputs: list[np.ndarray] | None = None,
    expected: list[np.ndarray] | None = None,
) -> None:
    """What a reproducer folder of the failing function needs: its MLIR, and for a run or
    numerics failure the call's inputs (and torch eager's outputs on them)."""
    folder = out / "repro"
    folder.mkdir(exist_ok=True)
    for name, text in mlir.items():
        (folder / f"{name}.mlir").write_text(text, encoding="utf-8", newline="\n")
    arrays = {f"input_{i}": a for i, a in enumerate(inputs or [])}
    arrays |= {f"expected_{i}": a for i, a in enumerate(expected or [])}
    np.savez(folder / "arrays.npz", allow_pickle=False, **arrays)
    (folder / "repro.json").write_text(
        json.dumps(
            {"function": which, "inputs": len(inputs or []), "expected": len(expected or [])}
        ),
        encoding="utf-8",
        newline="\n",
    )


def eager_outputs(model: Any, which: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """torch eager's outputs of the same wrapper on the same inputs."""
    import torch

    prefill, decode = wrappers(model)
    module = prefill if which == "prefill" else decode
    with torch.no_grad():
        outputs = module(*[torch.from_numpy(np.ascontiguousarray(a)) for a in inputs])
    return [
        o.detach().float().numpy().copy() if o.is_floating_point() else o.numpy().copy()
        for o in outputs
    ]


def _seconds(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def timing(
    model: Any, prefill: IreeFunction, decode: IreeFunction, ids: Any, rounds: int = 10
) -> dict[str, Any]:
    """Seconds of a prefill and of one decode step, IREE and torch eager, interleaved (each
    round times all four), after one untimed call of each."""
    import torch
    from transformers import DynamicCache

    ids_np = ids.numpy()
    first = prefill(ids_np)
    kv = first[1:]
    token = np.array([[int(np.argmax(first[0][0]))]], dtype=np.int64)
    position = np.array([[ids.shape[1]]], dtype=np.int64)
    kv_torch = [torch.from_numpy(a) for a in kv]

    def eager_prefill() -> None:
        model(ids, use_cache=True, cache=DynamicCache(config=model.config))

    def eager_decode() -> None:
        cache = DynamicCache(config=model.config)
        for layer in range(len(kv_torch) // 2):
            cache.update(kv_torch[2 * layer], kv_torch[2 * layer + 1], layer)
        model(
            torch.from_numpy(token),
            position_ids=torch.from_numpy(position),
            use_cache=True,
            cache=cache,
        )

    calls = {
        "prefill IREE": lambda: prefill(ids_np),
        "prefill torch eager": eager_prefill,
        "decode IREE": lambda: decode(token, position, *kv),
        "decode torch eager": eager_decode,
    }
    samples: dict[str, list[float]] = {name: [] for name in calls}
    with torch.no_grad():
        for fn in calls.values():
            fn()
        for _ in range(rounds):
            for name, fn in calls.items():
                samples[name].append(_seconds(fn))
    return {"prompt_tokens": int(ids.shape[1]), "samples_s": samples}


def run(spec: GenerationSpec, out: Path) -> dict[str, Any]:
    progress = Progress(out)
    info: dict[str, Any] = {"route": ROUTE}
    cache_hits: dict[str, bool] = {}
    result: dict[str, Any] = {
        "stage": Stage.PREPARE,
        "status": Status.ERROR,
        "diagnostics": [],
        "info": info,
    }
    try:
        progress.enter(Stage.PREPARE)
        warnings.filterwarnings("ignore")
        try:
            model = load_model(spec)
        except Exception as e:  # noqa: BLE001 - the model cannot be built: the harness's input
            raise StageFailed(Stage.PREPARE, f"cannot build the model: {_reason(e)}") from None
        tokenizer = tokenizer_of(spec)
        ids = prompt_ids(spec, int(model.config.vocab_size), tokenizer)
        info["prompt_ids"] = ids[0].tolist()
        info["model_type"] = model.config.model_type
        progress.enter(Stage.REFERENCE)
        try:
            eager = eager_generate(model, ids, spec.tokens)
        except Exception as e:  # noqa: BLE001 - transformers' generate failed: no reference
            raise StageFailed(
                Stage.REFERENCE, f"transformers' generate failed: {_reason(e)}"
            ) from None
        progress.enter(Stage.PREPARE)
        pre_program, dec_program = export_pair(model, ids)
        progress.enter(Stage.IMPORT)
        pre_mlir, preparation = prepare(pre_program)
        dec_mlir, _ = prepare(dec_program)
        mlir = {"prefill": pre_mlir, "decode": dec_mlir}
        info["preparation"] = preparation
        progress.enter(Stage.COMPILE)
        vmfbs = {}
        for which, text in mlir.items():
            try:
                vmfbs[which] = compile_module(text, spec, cache_hits)
            except StageFailed:
                write_repro(out, {"input": text}, which)
                raise
        pre_vmfb, dec_vmfb = vmfbs["prefill"], vmfbs["decode"]
        if spec.compile_only:
            result.update(stage=Stage.COMPILE, status=Status.PASS)
            raise _Done
        progress.enter(Stage.LOAD)
        try:
            prefill, decode = (
                IreeFunction(pre_vmfb, spec.device),
                IreeFunction(dec_vmfb, spec.device),
            )
        except Exception as e:  # noqa: BLE001 - IREE's runtime refused the module
            raise StageFailed(Stage.LOAD, _reason(e)) from None
        progress.enter(Stage.RUN)
        try:
            produced = iree_generate(prefill, decode, ids.numpy(), spec.tokens)
        except Exception as e:  # noqa: BLE001 - IREE's runtime failed a call
            raise StageFailed(Stage.RUN, _reason(e)) from None
        progress.enter(Stage.COMPARE)
        status, diagnostics, compared = compare(spec, eager, produced)
        info.update(compared)
        if status == Status.FAIL:
            step = int(compared.get("failing_step", 0))
            which, inputs = step_call(prefill, decode, ids.numpy(), produced[0], step)
            write_repro(
                out, {"input": mlir[which]}, which, inputs, eager_outputs(model, which, inputs)
            )
        if tokenizer is not None:
            info["text"] = {
                "prompt": tokenizer.decode(info["prompt_ids"]),
                "eager": tokenizer.decode(compared["eager_tokens"]),
                "iree": tokenizer.decode(compared["iree_tokens"]),
            }
        result.update(
            stage=Stage.COMPARE if status == Status.FAIL else Stage.RUN,
            status=status,
            diagnostics=diagnostics,
        )
        if status == Status.PASS and spec.timing:
            progress.enter("timing")
            info["timing"] = timing(model, prefill, decode, ids)
    except StageFailed as e:
        result.update(stage=e.stage, status=Status.ERROR, diagnostics=str(e).splitlines())
    except _Done:
        pass
    progress.enter("done")
    info["cache_hits"] = cache_hits
    result["stage_times"] = progress.times
    return result


def main(argv: list[str]) -> int:
    spec = GenerationSpec.from_json(Path(argv[0]).read_text(encoding="utf-8"))
    out = Path(argv[1])
    result = run(spec, out)
    (out / "result.json").write_text(
        json.dumps(result, sort_keys=True), encoding="utf-8", newline="\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
