#!/usr/bin/env python3
"""What IREE's scheduling statistics cost a compile (issue 42, docs/speed.md "Compile
statistics"): the same imported ONNX operator tests compiled with and without
``--iree-scheduling-dump-statistics-format=json``, interleaved, in one process.

    python benchmarks/compile_stats_cost.py [--rounds 3]

Prints the CPU seconds of each side and their ratio.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iree.compiler.api import Output, Session, Source

from iree_conformance.engine.worker.compiler import STATS_FLAG, STATS_FORMAT_FLAG
from iree_conformance.frontends.onnx import node_tests
from iree_conformance.suites.onnx_ops import data_dir

CASES = ("test_abs", "test_relu", "test_softmax_axis_0", "test_matmul_2d",
         "test_conv_with_strides_padding", "test_gemm_default_no_bias",
         "test_reduce_mean_default_axes_keepdims_example", "test_layer_normalization_2d_axis0")  # fmt: skip
FLAGS = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=generic")  # fmt: skip


def _compile(session, source: bytes) -> float:
    inv = session.invocation()
    try:
        inv.parse_source(Source.wrap_buffer(session, source))
        start = time.process_time()
        if not inv.execute():
            raise RuntimeError("the compile failed")
        out = Output.open_membuffer()
        inv.output_vm_bytecode(out)
        bytes(out.map_memory())
        return time.process_time() - start
    finally:
        inv.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = node_tests.materialize(data_dir(None))
    tmp = Path(tempfile.mkdtemp(prefix="compile-stats-cost-"))
    importer = Path(sys.executable).with_name("iree-import-onnx")
    sources = []
    for name in CASES:
        out = tmp / f"{name}.mlir"
        model = root / name / "model.onnx"
        cmd = [str(importer), str(model), "--opset-version", "17", "-o", str(out)]
        if subprocess.run(cmd, capture_output=True).returncode == 0:
            sources.append(out.read_bytes())
    plain, stats = Session(), Session()
    plain.set_flags(*FLAGS)
    stats.set_flags(*FLAGS, STATS_FORMAT_FLAG, f"{STATS_FLAG}={tmp / 'statistics.json'}")
    for session in (plain, stats):
        _compile(session, sources[0])  # warm-up
    total = {False: 0.0, True: 0.0}
    for i in range(args.rounds):
        order = ((False, plain), (True, stats)) if i % 2 == 0 else ((True, stats), (False, plain))
        for source in sources:
            for with_stats, session in order:
                total[with_stats] += _compile(session, source)
    print(
        f"{len(sources)} cases x {args.rounds} rounds: CPU s without {total[False]:.2f}, "
        f"with statistics {total[True]:.2f}, ratio {total[True] / total[False]:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
