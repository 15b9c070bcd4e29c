"""Loopback servers for a local run: static files (the tiny model zoo) on 127.0.0.1.

`make_tiny_zoo` writes a Model Zoo manifest in the onnx.hub format with two small
models built with onnx.helper (sha256 and size right), named like the smoke profile's
two zoo models, so that its zoo step downloads, verifies and runs real files without
leaving the machine.
"""

from __future__ import annotations

import functools
import hashlib
import json
import socket
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

from devtools._loopback import LoopbackServer

# Stand-ins for the smoke profile's two zoo models, under their names, so that the
# profile's selection (--zoo-models mnist-12,squeezenet1.1-7) runs unchanged.
TINY_MODELS = {
    "mnist-12": "vision/classification/mnist/model/mnist-12.onnx",
    "squeezenet1.1-7": "vision/classification/squeezenet/model/squeezenet1.1-7.onnx",
}
MANIFEST_NAME = "ONNX_HUB_MANIFEST.json"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


class StaticServer(LoopbackServer):
    """Serves one folder over HTTP on 127.0.0.1 in a thread."""

    def __init__(self, root: Path) -> None:
        super().__init__(functools.partial(_QuietHandler, directory=str(root)))


def tiny_model_bytes(seed: int = 0) -> bytes:
    """y = relu(x @ W + b), x: float32[1, 4], fixed weights (varied by seed); opset 17."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10 - 0.5, "W")
    b = numpy_helper.from_array(np.array([0.1, -0.2, 0.3], dtype=np.float32) + seed / 10, "b")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["xw"]),
            helper.make_node("Add", ["xw", "b"], ["pre"]),
            helper.make_node("Relu", ["pre"], ["y"]),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        initializer=[w, b],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17)],
        producer_name="iree-conformance act_local",
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def make_tiny_zoo(root: Path) -> list[dict[str, Any]]:
    """Writes the models and the manifest under root; returns the manifest."""
    manifest = []
    for seed, (name, model_path) in enumerate(sorted(TINY_MODELS.items())):
        data = tiny_model_bytes(seed)
        target = root / model_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        manifest.append(
            {
                "model": f"{name} (tiny local stand-in)",
                "model_path": model_path,
                "onnx_version": "1.12",
                "opset_version": 17,
                "metadata": {
                    "model_sha": hashlib.sha256(data).hexdigest(),
                    "model_bytes": len(data),
                    "tags": ["local", "tiny"],
                },
            }
        )
    (root / MANIFEST_NAME).write_text(
        json.dumps(manifest, indent=2) + "\n", encoding="utf-8", newline="\n"
    )
    return manifest
