"""Models over protobuf's 2 GiB and hostile external data (issue 47 item 2, issue 46).

The external data files are sparse (truncate): a 2.1 GiB model costs no disk, and the
checks here must not read it either. Every run that could load it is a child process
under a 4 GiB address-space limit whose peak RSS is measured."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from iree_conformance.frontends.onnx import prepare
from iree_conformance.frontends.onnx.prepare import PrepareError
from tests.support.onnx_testlib import external_data_model

REPO = Path(__file__).resolve().parents[3]
GIB = 2**30
BIG = int(2.1 * GIB)
LIMIT = 4 * GIB


def _limited() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def child(code: str) -> dict:
    """Runs code in a child under the 4 GiB limit; its JSON result and peak RSS (bytes)."""
    script = textwrap.dedent(
        """
        import json, resource, sys
        out = {}
        try:
        %s
        except Exception as e:
            out["error"] = f"{type(e).__name__}: {e}"
        out["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps(out))
        """
    ) % textwrap.indent(textwrap.dedent(code), "    ")
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        preexec_fn=_limited,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_model_over_2_gib_is_checked_by_path_and_refused_in_bounded_memory(tmp_path):
    path = external_data_model(tmp_path, BIG)
    got = child(
        f"""
        from pathlib import Path
        from iree_conformance.frontends.onnx import prepare
        out["reason"] = prepare.large_model_reason(Path({str(path)!r}))
        try:
            prepare.prepare_model(Path({str(path)!r}))
        except prepare.PrepareError as e:
            out["prepare"] = str(e)
        data = Path({str(path)!r}).read_bytes()
        try:
            prepare.prepare_model(data, base_dir=Path({str(tmp_path)!r}))
        except prepare.PrepareError as e:
            out["bytes"] = str(e)
        """
    )
    assert "error" not in got, got
    assert "2.10 GiB" in got["reason"] and "onnx.checker (by path) accepts it" in got["reason"]
    for key in ("prepare", "bytes"):
        assert "over the 2 GiB" in got[key] and "Failed to serialize" not in got[key], got
    print(f"peak RSS {got['rss'] / 2**20:.0f} MiB for a {BIG / GIB:.1f} GiB model")
    assert got["rss"] < GIB, got["rss"]


def test_a_model_over_2_gib_the_checker_rejects_says_why(tmp_path):
    path = external_data_model(tmp_path, BIG, op="NoSuchOp")
    with pytest.raises(PrepareError, match="onnx.checker rejects the model.*NoSuchOp"):
        prepare.large_model_reason(path)


def test_check_model_gives_a_2_1_gib_model_a_verdict_within_4_gib(tmp_path):
    path = external_data_model(tmp_path, BIG)
    code = f"""
        import contextlib, io, sys
        from iree_conformance.cli.main import main
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                out["exit"] = main(["check-model", {str(path)!r}, "--store-dir", {str(tmp_path / "store")!r}])
            except SystemExit as e:
                out["exit"] = e.code
        out["text"] = buf.getvalue()
        """
    got = child(code)
    assert "error" not in got, got
    assert "verdict: skip" in got["text"] and "over the 2 GiB" in got["text"], got
    assert got["exit"] == 9, got  # no verdict on IREE: EXIT_UNJUDGED
    assert got["rss"] < LIMIT, got["rss"]


def test_external_data_outside_the_models_folder_is_refused(tmp_path):
    (tmp_path / "secret").mkdir()
    path = external_data_model(tmp_path / "models", 4096, location="../secret/w.bin")
    for source, base in ((path, None), (path.read_bytes(), path.parent)):
        with pytest.raises(PrepareError, match="outside the model's folder"):
            prepare.prepare_model(source, base_dir=base)


def test_a_tensor_that_declares_more_than_its_file_holds_is_refused_unread(tmp_path):
    path = external_data_model(tmp_path, 64 * GIB, file_bytes=1024)
    with pytest.raises(PrepareError, match="declares 68,719,476,736 bytes.*holds 1,024 bytes"):
        prepare.prepare_model(path)


def test_a_many_gb_tensor_in_a_sparse_file_is_refused_unread(tmp_path):
    path = external_data_model(tmp_path, 64 * GIB)
    got = child(
        f"""
        from pathlib import Path
        from iree_conformance.frontends.onnx import prepare
        data = Path({str(path)!r}).read_bytes()
        prepare.prepare_model(data, base_dir=Path({str(tmp_path)!r}))
        """
    )
    assert "over the 2 GiB" in got.get("error", ""), got
    assert got["rss"] < GIB
