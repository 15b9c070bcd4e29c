"""The reference: ``tar --posix -cf - PATHS | zstd -T0 | wc -c`` run as processes.

Used by ``measure --engine system``, the tests and the benchmark to check our
streaming measurement against what the runner's own tools produce.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import MeasureError

READ = 1 << 20


@dataclass
class PipelineResult:
    compressed_bytes: int
    seconds: float


def missing_tools(method: str = "zstd") -> list[str]:
    """Names of the binaries the reference pipeline needs but cannot find."""
    need = ["tar", "zstd" if method == "zstd" else "gzip"]
    return [tool for tool in need if shutil.which(tool) is None]


def run_pipeline(
    paths: Sequence[str], method: str = "zstd", cwd: str | None = None
) -> PipelineResult:
    """Run tar | compressor and count the compressed bytes; nothing touches disk."""
    missing = missing_tools(method)
    if missing:
        raise MeasureError(
            f"the system pipeline needs {', '.join(missing)} on PATH; install it "
            "(e.g. apt-get install zstd) or use the default python engine"
        )
    compress_cmd = ["zstd", "-T0", "-q", "-c"] if method == "zstd" else ["gzip", "-c"]
    start = time.perf_counter()
    tar = subprocess.Popen(
        ["tar", "--posix", "-cf", "-", "-P", "--", *paths],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    comp = subprocess.Popen(
        compress_cmd, stdin=tar.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert tar.stdout is not None and comp.stdout is not None
    tar.stdout.close()  # so tar sees SIGPIPE if the compressor dies
    total = 0
    while True:
        chunk = comp.stdout.read(READ)
        if not chunk:
            break
        total += len(chunk)
    comp_err = comp.communicate()[1]
    tar_err = tar.communicate()[1]
    seconds = time.perf_counter() - start
    if tar.returncode not in (0,) or comp.returncode != 0:
        detail = (tar_err or comp_err).decode(errors="replace").strip()
        raise MeasureError(
            f"system pipeline failed (tar exit {tar.returncode}, "
            f"{compress_cmd[0]} exit {comp.returncode}): {detail}"
        )
    return PipelineResult(total, seconds)
