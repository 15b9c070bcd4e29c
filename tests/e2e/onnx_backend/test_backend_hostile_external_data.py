"""The onnx backend on a model whose external data points outside its folder, or that
declares a tensor of many GB (issue 46): a clean error at prepare, nothing read. Run in a
child under a 4 GiB address-space limit (inherited by IREE's worker)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from iree_conformance.common.process_group import launched

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 4 * 2**30

SCRIPT = """
import sys
from pathlib import Path
from tests.support.onnx_testlib import external_data_model
from iree_conformance.onnx_backend.backend import IreeBackend, IreeBackendError
t = Path(sys.argv[1])
(t / "secret").mkdir()
cases = {"outside": dict(nbytes=4096, location="../secret/w.bin"), "huge": dict(nbytes=64 * 2**30)}
for name, kw in cases.items():
    n = kw.pop("nbytes")
    path = external_data_model(t / name, n, **kw)
    try:
        IreeBackend.prepare(str(path), store_dir=str(t / "store"))
        print(name, "NO ERROR")
    except IreeBackendError as e:
        print(name, str(e).replace(chr(10), " "))
"""


def test_hostile_external_data_is_an_error_at_prepare(tmp_path: Path) -> None:
    proc = subprocess.run(
        launched([sys.executable, "-c", SCRIPT, str(tmp_path)], address_space=LIMIT),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "outside the model's folder" in lines["outside"], lines
    assert "64.00 GiB of external data; importing it" in lines["huge"], lines
    assert "nothing was read" in lines["huge"] and "Traceback" not in lines["huge"], lines
