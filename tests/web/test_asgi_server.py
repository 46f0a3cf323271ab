"""The viewer and the MCP front end listen on sockets asyncio turns Nagle off for: without it, each
response on a kept-alive connection waits for the client's delayed ACK."""

from __future__ import annotations

import socket

from starlette.applications import Starlette

from evigate.server.asgi_server import listen_tcp
from evigate.server.web.app import WebServer


def test_the_listening_socket_is_made_with_proto_tcp() -> None:
    sock = listen_tcp("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # asyncio sets TCP_NODELAY on such connections only
    finally:
        sock.close()


async def test_the_web_server_listens_on_such_a_socket() -> None:
    server = WebServer(Starlette(), "127.0.0.1", 0, grace_s=1)
    try:
        assert server._sock.proto == socket.IPPROTO_TCP
        assert server.url == f"http://127.0.0.1:{server.port}/"
    finally:
        await server.stop()
