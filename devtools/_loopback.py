"""An HTTP server on 127.0.0.1 in a daemon thread: the base of every local test server
(the fake GitHub API, the tiny zoo). Loopback only: nothing here listens elsewhere."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

T = TypeVar("T", bound="LoopbackServer")


class LoopbackServer:
    def __init__(self, handler: Any, port: int = 0, poll_interval: float = 0.5) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": poll_interval}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}"

    def start(self: T) -> T:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


__all__ = ["BaseHTTPRequestHandler", "LoopbackServer"]
