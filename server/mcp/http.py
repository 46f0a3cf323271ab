"""MCP over streamable HTTP, inside the service's process and event loop (`serve --mcp HOST:PORT`),
next to the gRPC server and the web viewer.

Every request passes two checks before the SDK sees it: its Origin (a browser page may call only
from a loopback origin or one listed in `allowed_origins`: DNS-rebinding and cross-site calls are
refused with 403) and, when the service has auth tokens, its `Authorization: Bearer` token (the
gRPC tokens; refused with 401). Loopback by default; a non-loopback address needs tokens. The
transport is stateless: each request stands alone, so a restart loses no client state."""

from __future__ import annotations

import hmac
import ipaddress
import logging
import math
import socket
from collections.abc import Sequence
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("evigate.mcp")
PATH = "/mcp"
LOOPBACK_ORIGINS = ("http://127.0.0.1", "http://localhost", "http://[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str | None, allowed: Sequence[str]) -> bool:
    """No Origin (a non-browser client) passes; a loopback origin on any port passes; anything
    else must be listed exactly."""
    if not origin:
        return True
    if origin in allowed:
        return True
    return any(origin == base or origin.startswith(base + ":") for base in LOOPBACK_ORIGINS)


class Gate:
    """ASGI middleware: the Origin check, then the bearer token."""

    def __init__(self, app: ASGIApp, tokens: Sequence[str], allowed_origins: Sequence[str]) -> None:
        self._app = app
        self._tokens = [t.encode() for t in tokens]
        self._origins = tuple(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if not origin_allowed(origin, self._origins):
            log.warning("mcp request refused", extra={"origin": origin, "reason": "origin"})
            await _refuse(403, "FORBIDDEN_ORIGIN", f"origin {origin} is not allowed", (scope, receive, send))
            return
        if self._tokens and not self._token_ok(headers.get("authorization", "")):
            presented = bool(headers.get("authorization"))
            reason = "INVALID_TOKEN" if presented else "MISSING_TOKEN"
            message = "invalid bearer token" if presented else "missing bearer token"
            hint = f"{message}; send `Authorization: Bearer <token>`"
            await _refuse(401, reason, hint, (scope, receive, send))
            return
        await self._app(scope, receive, send)

    def _token_ok(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return False
        given = token.strip().encode()
        # Every token is compared, each in constant time: the time taken tells nothing.
        return any([hmac.compare_digest(given, known) for known in self._tokens])


async def _refuse(status: int, reason: str, message: str, call: tuple[Scope, Receive, Send]) -> None:
    headers = {"WWW-Authenticate": 'Bearer realm="evigate"'} if status == 401 else None
    body = {"error": {"code": status, "reason": reason, "message": message}}
    await JSONResponse(body, status_code=status, headers=headers)(*call)


def http_app(
    server: MCPServer[Any], host: str, tokens: Sequence[str], allowed_origins: Sequence[str] = ()
) -> ASGIApp:
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=False,  # Gate checks the Origin; any Host may reach a bound address
    )
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=security,
        host=host,
    )
    return Gate(app, tokens, allowed_origins)


class McpHttpServer:
    """uvicorn on an already bound socket in the running loop, as the web viewer runs (no thread,
    no signal handlers of its own); its lifespan runs the SDK's session manager."""

    def __init__(
        self,
        server: MCPServer[Any],
        host: str,
        port: int,
        tokens: Sequence[str],
        *,
        allowed_origins: Sequence[str] = (),
        grace_s: float = 5.0,
    ) -> None:
        if not tokens and not is_loopback(host):
            raise OSError(f"MCP on {host}: a non-loopback address needs auth tokens (--auth-token)")
        try:
            self._sock = _listen(host, port)
        except OSError as error:
            raise OSError(f"cannot listen on {host}:{port} (mcp): {error.strerror or error}") from None
        self.host = host
        self.port = int(self._sock.getsockname()[1])
        config = uvicorn.Config(
            http_app(server, host, tokens, allowed_origins),
            log_config=None,
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=math.ceil(grace_s),
            server_header=False,
        )
        self._server = uvicorn.Server(config)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{PATH}"

    async def start(self) -> None:
        config = self._server.config
        if not config.loaded:
            config.load()
        self._server.lifespan = config.lifespan_class(config)
        await self._server.startup(sockets=[self._sock])
        if self._server.should_exit:  # the lifespan failed to start
            raise OSError(f"MCP on {self.url} did not start")
        log.info("mcp serving", extra={"url": self.url})

    async def stop(self, grace_s: float | None = None) -> None:
        if grace_s is not None:
            self._server.config.timeout_graceful_shutdown = math.ceil(grace_s)
        if self._server.started:
            await self._server.shutdown(sockets=[self._sock])
        else:
            self._sock.close()


def _listen(host: str, port: int) -> socket.socket:
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
