"""A tiny loopback HTTP(S) server that records each request's path and headers and answers canned
bodies: the way to see what the clients really send."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

EMPTY_VECTOR = {"status": "success", "data": {"resultType": "vector", "result": []}}


@dataclass
class Recorder:
    url: str
    routes: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def answer(self, path: str, body: Any, status: int = 200) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.routes[path] = (status, raw)


@contextmanager
def recording_server(cert: Path | None = None, key: Path | None = None) -> Iterator[Recorder]:
    recorder = Recorder("")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            recorder.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            status, body = recorder.routes.get(path, (404, b"404 page not found"))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    scheme = "http"
    if cert is not None and key is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    recorder.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()
