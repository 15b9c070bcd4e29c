"""Helpers for the ONNX tests: tiny models, a scriptable loopback HTTP server, cache checks."""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]

# -- running the suite ----------------------------------------------------------------


def check_model(path: Path, store: Path, *extra: str) -> subprocess.CompletedProcess:
    """``iree-conformance check-model PATH EXTRA`` in a child process on the store ``store``."""
    env = {**os.environ, "IREE_CONFORMANCE_STORE": str(store)}
    return subprocess.run(
        [sys.executable, "-m", "iree_conformance.cli.main", "check-model", str(path), *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def run_conformance(
    tmp: Path, env: dict[str, str], marker: str, *args: str
) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    """``pytest conformance -m MARKER ARGS`` in a child process (no retries, an empty
    expectations folder under ``tmp``), with ``env`` over this process's environment;
    returns the process and the Outcomes of its results JSON by case id."""
    (tmp / "expectations").mkdir(parents=True, exist_ok=True)
    report = tmp / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "conformance"),
            "-m",
            marker,
            "-p",
            "no:cacheprovider",
            "-q",
            "--expectations-dir",
            str(tmp / "expectations"),
            "--report-json",
            str(report),
            "--retries",
            "0",
            *args,
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert report.exists(), proc.stdout + proc.stderr
    return proc, {o["case_id"]: o for o in json.loads(report.read_text())["outcomes"]}


# -- models -------------------------------------------------------------------------


def add_model(opset: int = 17, shape: list | None = None, name: str = "add") -> onnx.ModelProto:
    """y = x + b with an initializer b; x of ``shape`` (default [2, 3])."""
    shape = shape or [2, 3]
    b = numpy_helper.from_array(np.arange(3, dtype=np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["y"], name="add0")],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        initializer=[b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)
    return model


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_tarball(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    """A .tar.gz with the given members (names used verbatim) and symlinks."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return buf.getvalue()


def assert_cache_holds_only(root: Path, expected: dict[str, str]) -> None:
    """Every file under ``root`` is one of ``expected`` (file name -> sha256), intact;
    no temporary or partial files or folders are left."""
    found = {}
    for path in root.rglob("*"):
        assert ".part-" not in path.name and ".tmp-" not in path.name, f"leftover {path}"
        if path.is_file():
            found[path.name] = sha256(path.read_bytes())
    assert found == expected


# -- loopback HTTP server --------------------------------------------------------------


@dataclass
class Route:
    """What the server does for one path.

    ``statuses``: error codes answered (one per request) before the body is served.
    ``cut_after``: on the first body response, send this many bytes then drop the
    connection. ``delay``: seconds to wait before answering (a slow server).
    ``ranges``: whether Range requests are honoured (206) or ignored (200).
    """

    body: bytes
    statuses: list[int] = field(default_factory=list)
    cut_after: int | None = None
    delay: float = 0.0
    ranges: bool = True


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that time out or hang up mid-body are part of the tests


class LoopbackServer:
    """ThreadingHTTPServer on 127.0.0.1:0 in a thread; records (path, Range) per request."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, str | None, int]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                outer._handle(self)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def base(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return f"{self.base}/{path.lstrip('/')}"

    def add(self, path: str, body: bytes, **kw: object) -> str:
        self.routes["/" + path.lstrip("/")] = Route(body, **kw)  # type: ignore[arg-type]
        return self.url(path)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        route = self.routes.get(h.path)
        range_header = h.headers.get("Range")
        if route is None:
            self._send_status(h, 404, range_header)
            return
        if route.delay:
            time.sleep(route.delay)
        if route.statuses:
            self._send_status(h, route.statuses.pop(0), range_header)
            return
        body, start, status = route.body, 0, 200
        if range_header and route.ranges:
            start = int(range_header.split("=")[1].split("-")[0])
            status = 206
        self.requests.append((h.path, range_header, status))
        payload = body[start:]
        h.send_response(status)
        h.send_header("Content-Length", str(len(payload)))
        h.send_header("Accept-Ranges", "bytes")
        if status == 206:
            h.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        h.end_headers()
        if route.cut_after is not None:
            h.wfile.write(payload[: route.cut_after])
            h.wfile.flush()
            route.cut_after = None
            h.connection.shutdown(socket.SHUT_RDWR)
            h.close_connection = True
            return
        h.wfile.write(payload)

    def _send_status(self, h: BaseHTTPRequestHandler, code: int, range_header: str | None) -> None:
        self.requests.append((h.path, range_header, code))
        h.send_response(code)
        h.send_header("Content-Length", "0")
        h.end_headers()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def unused_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: The non-zero weights of a `marked` external data model (exact in float32 sums).
MARK = (1.5, -2.25, 3.0, 0.125, 8.0, -0.5, 0.25, 4.0)


def marked_at(nbytes: int) -> int:
    """The element where a `marked` model's weights start: 1,000 from the end."""
    return nbytes // 4 - 1000


def marked_expected(x) -> np.ndarray:
    """What a `marked` model computes for its input `x` (2 floats)."""
    return (
        np.asarray(x, np.float32) + np.float32(sum(MARK)) + np.asarray(MARK[:2], np.float32)
    ).astype(np.float32)


def external_data_model(
    folder: Path,
    nbytes: int,
    *,
    name: str = "big",
    location: str | None = None,
    file_bytes: int | None = None,
    op: str = "ReduceSum",
    marked: bool = False,
) -> Path:
    """A model `y = x + ReduceSum(w)` whose float initializer `w` of `nbytes` lives in an
    external data file made sparse (truncate): gigabytes cost neither disk nor memory.
    `location` may point elsewhere (outside the folder); `file_bytes` makes the file
    shorter or longer than the tensor declares; `op` another op (an unknown one for a
    model the checker rejects). `marked` writes `MARK` at element `marked_at(nbytes)`
    (near the end: past 2 GiB, where a 32-bit offset wraps) and makes the model
    `y = x + ReduceSum(w) + Gather(w, [at, at + 1])`: a weight bound wrongly, shifted or
    zero changes `y` (`marked_expected`)."""
    import onnx
    from onnx import TensorProto, helper

    folder.mkdir(parents=True, exist_ok=True)
    count = nbytes // 4
    where = location or f"{name}.bin"
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[count])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", where), ("offset", "0"), ("length", str(count * 4))):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    nodes = [helper.make_node(op, ["w"], ["s"], keepdims=0)]
    initializers = [w]
    if marked:
        at = marked_at(nbytes)
        initializers.append(helper.make_tensor("at", TensorProto.INT64, [2], [at, at + 1]))
        nodes += [
            helper.make_node("Gather", ["w", "at"], ["g"], axis=0),
            helper.make_node("Add", ["x", "s"], ["xs"]),
            helper.make_node("Add", ["xs", "g"], ["y"]),
        ]
    else:
        nodes.append(helper.make_node("Add", ["x", "s"], ["y"]))
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = folder / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    data = (folder / where).resolve()
    data.parent.mkdir(parents=True, exist_ok=True)
    with open(data, "wb") as f:
        f.truncate(count * 4 if file_bytes is None else file_bytes)
        if marked:
            f.seek(marked_at(nbytes) * 4)
            f.write(np.asarray(MARK, dtype=np.float32).tobytes())
    assert onnx.load(str(path), load_external_data=False).graph.initializer[0].name == "w"
    return path
