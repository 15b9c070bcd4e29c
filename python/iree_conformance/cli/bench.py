"""``iree-conformance bench``: the NxIREE seed's speed table, reproduced.

The seed (an NxIREE article) ends on Benchee's table for one softmax, ``exp(x) / sum(exp(x))``
over f32[4] and f32[100000], on Nx (plain Elixir), EXLA (XLA) and NxIREE. Here the same
StableHLO program runs on IREE llvm-cpu, on XLA through ``jax.jit``, on numpy (the
seed's Nx role: the framework's own eager code) and, where torch is installed, on torch
eager (the front door most IREE users come through), each called as a user calls it:

- IREE: the compiled module's function on a host numpy array, the result copied back
  (``to_host``), as ``NxIREE.call`` hands back a tensor;
- XLA: the jitted function on a device-resident array (the seed's ``exla_input``),
  ``block_until_ready``;
- numpy: ``np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)``;
- torch: the same expression on a CPU tensor, under ``torch.no_grad``.

The rows are sampled interleaved (common/stats.py), so the ratios survive a loaded
machine; each output is checked against numpy before any timing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.stats import Sampling, benchee_table, sample_interleaved, summarize
from iree_conformance.frontends.jax_export.xla_timing import xla_softmax
from iree_conformance.frontends.torch_export.timing import torch_softmax

SIZES = (4, 100_000)
SEED_INPUT = np.array([1.0, 2.0, -1.0, -1.5], dtype=np.float32)  # the seed's f32[4]

# The seed's module (EXLA.to_mlir_module of its softmax), at any length.
SOFTMAX_MLIR = """\
module {{
  func.func public @main(%arg0: tensor<{n}xf32>) -> tensor<{n}xf32> {{
    %0 = stablehlo.exponential %arg0 : tensor<{n}xf32>
    %1 = stablehlo.exponential %arg0 : tensor<{n}xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) across dimensions = [0] : (tensor<{n}xf32>, tensor<f32>) -> tensor<f32>
     reducer(%arg1: tensor<f32>, %arg2: tensor<f32>)  {{
      %6 = stablehlo.add %arg2, %arg1 : tensor<f32>
      stablehlo.return %6 : tensor<f32>
    }}
    %3 = stablehlo.reshape %2 : (tensor<f32>) -> tensor<1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<1xf32>) -> tensor<{n}xf32>
    %5 = stablehlo.divide %0, %4 : tensor<{n}xf32>
    return %5 : tensor<{n}xf32>
  }}
}}
"""

IREE_FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
    "--iree-input-type=stablehlo",
)
IREE_DRIVER = "local-task"


def softmax_input(n: int) -> np.ndarray:
    """The seed's f32[4], or n standard-normal values (the seed's Statistics.Normal.rand)."""
    if n == len(SEED_INPUT):
        return SEED_INPUT.copy()
    return np.random.default_rng(0).standard_normal(n).astype(np.float32)


def numpy_softmax(x: np.ndarray) -> np.ndarray:
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)


def iree_softmax(n: int) -> tuple[Callable[[np.ndarray], np.ndarray], dict[str, Any]]:
    """The compiled seed module as a callable, and what it took to build."""
    import time

    import iree.compiler as compiler
    import iree.runtime as rt

    t = time.process_time()
    vmfb = compiler.compile_str(SOFTMAX_MLIR.format(n=n), extra_args=list(IREE_FLAGS))
    compile_cpu_s = time.process_time() - t
    config = rt.Config(IREE_DRIVER)
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.copy_buffer(config.vm_instance, vmfb))
    main = context.modules.module["main"]
    return (lambda x: main(x).to_host()), {
        "compile_cpu_s": compile_cpu_s,
        "module_bytes": len(vmfb),
        "flags": list(IREE_FLAGS),
        "driver": IREE_DRIVER,
    }


def bench_size(n: int, sampling: Sampling, out=None) -> dict[str, Any]:
    out = out or sys.stdout
    x = softmax_input(n)
    expected = numpy_softmax(x)
    iree_call, iree_info = iree_softmax(n)
    calls: dict[str, Callable[[], object]] = {
        "numpy": lambda: numpy_softmax(x),
        "iree_llvm_cpu": lambda: iree_call(x),
    }
    np.testing.assert_allclose(iree_call(x), expected, rtol=1e-5, atol=1e-7)
    xla = xla_softmax()
    notes = []
    if xla is None:
        notes.append("jax is not installed: no XLA row (pip install 'iree-conformance[jax]')")
    else:
        jitted, put = xla
        x_dev = put(x)
        np.testing.assert_allclose(np.asarray(jitted(x_dev)), expected, rtol=1e-5, atol=1e-7)
        calls["xla_jax_jit"] = lambda: jitted(x_dev)
    eager = torch_softmax()
    if eager is None:
        notes.append("torch is not installed: no torch row (docs/torch.md says how)")
    else:
        softmax, as_tensor = eager
        x_tensor = as_tensor(x.copy())
        np.testing.assert_allclose(softmax(x_tensor).numpy(), expected, rtol=1e-5, atol=1e-7)
        calls["torch_eager"] = lambda: softmax(x_tensor)
    missing = "; ".join(notes) or None
    taken = sample_interleaved(calls, sampling)
    summaries = {name: s.summary() for name, s in taken.items()}
    print(f"\n## softmax f32[{n}]\n", file=out)
    for line in benchee_table(summaries):
        print(line, file=out)
    for note in notes:
        print(f"\nnote: {note}", file=out)
    return {
        "n": n,
        "iree": iree_info,
        "reference_missing": missing,
        "rows": {
            name: {
                "summary": summaries[name].as_dict(),
                "samples_s": taken[name].values_s,
                "loops": taken[name].loops,
            }
            for name in taken
        },
    }


def add_parser(sub) -> None:
    p = sub.add_parser(
        "bench",
        help="the NxIREE seed's speed table: softmax at f32[4] and f32[100000] on IREE "
        "llvm-cpu, XLA (jax.jit) and numpy, as Benchee prints it",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--sizes",
        default=",".join(str(n) for n in SIZES),
        help="comma-separated softmax lengths (default: the seed's 4,100000)",
    )
    p.add_argument("--time", type=float, default=3.0, help="seconds of sampling per size")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds of warm-up per function")
    p.add_argument("--json", dest="json_path", help="write the figures and raw samples here")
    p.set_defaults(func=cmd_bench)


#: The longest softmax bench times: 1 GiB of float32 per array.
MAX_SIZE = 2**28


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise ConfigurationError(
            f"--sizes: expected comma-separated integers, got {text!r}"
        ) from None
    if not sizes or any(n < 1 for n in sizes):
        raise ConfigurationError(f"--sizes: expected lengths of 1 or more, got {text!r}")
    too_large = [n for n in sizes if n > MAX_SIZE]
    if too_large:  # before anything is allocated (issue 47)
        n = too_large[0]
        raise ConfigurationError(
            f"--sizes {n}: a softmax of {n:,} float32 values takes {n * 4 / 2**30:,.1f} GiB per "
            f"array; give lengths up to {MAX_SIZE:,} ({MAX_SIZE * 4 // 2**30} GiB)"
        )
    return sizes


def cmd_bench(args: argparse.Namespace) -> int:
    sizes = parse_sizes(args.sizes)
    if args.time <= 0 or args.warmup < 0:
        raise ConfigurationError("--time must be over 0 and --warmup 0 or more")
    sampling = Sampling(
        warmup_s=args.warmup, min_runs=20, min_time_s=args.time, max_time_s=args.time * 4
    )
    results = [bench_size(n, sampling) for n in sizes]
    if args.json_path:
        from pathlib import Path

        from iree_conformance.common.fsutil import atomic_write_text

        atomic_write_text(Path(args.json_path), json.dumps({"sizes": results}, indent=1))
    return 0


__all__ = ["add_parser", "bench_size", "cmd_bench", "summarize"]
