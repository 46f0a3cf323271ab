"""uvicorn serving an ASGI app on an already bound socket in the running loop: no thread, no signal
handlers of its own (the service's handle SIGTERM and stop it). The web viewer and the MCP front end
both run on it."""

from __future__ import annotations

import logging
import math
import socket
from typing import Any, Literal

import uvicorn

log = logging.getLogger("evigate.asgi")


class AsgiServer:
    def __init__(
        self,
        app: Any,
        host: str,
        port: int,
        grace_s: float,
        *,
        what: str,
        path: str = "/",
        lifespan: Literal["on", "off"] = "off",
    ) -> None:
        try:
            self._sock = listen_tcp(host, port)
        except OSError as error:
            raise OSError(f"cannot listen on {host}:{port} ({what}): {error.strerror or error}") from None
        self.what, self.host, self.path = what, host, path
        self.port = int(self._sock.getsockname()[1])
        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan=lifespan,
            timeout_graceful_shutdown=math.ceil(grace_s),
            server_header=False,
        )
        self._server = uvicorn.Server(config)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"

    async def start(self) -> None:
        config = self._server.config
        if not config.loaded:
            config.load()
        self._server.lifespan = config.lifespan_class(config)
        await self._server.startup(sockets=[self._sock])
        if self._server.should_exit:  # the lifespan failed to start
            raise OSError(f"{self.what} on {self.url} did not start")
        log.info("%s serving", self.what, extra={"url": self.url})

    async def stop(self, grace_s: float | None = None) -> None:
        """Stops accepting, closes idle connections, lets requests in flight finish for the grace
        period, then cancels them."""
        if grace_s is not None:
            self._server.config.timeout_graceful_shutdown = math.ceil(grace_s)
        if self._server.started:
            await self._server.shutdown(sockets=[self._sock])
        else:
            self._sock.close()


def listen_tcp(host: str, port: int) -> socket.socket:
    """A listening TCP socket made with proto IPPROTO_TCP: asyncio turns Nagle off (TCP_NODELAY) only
    on connections of such a socket, and with Nagle on, each response on a kept-alive connection
    waits for the client's delayed ACK (about 40 ms). socket.create_server makes proto 0."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen()
    except OSError:
        sock.close()
        raise
    return sock
