"""The MCP front end's composition: the use cases it stands on, built from the running App's parts
(the same pipeline, store, Gatekeeper catalog, trace cache and tool backend the gRPC servicers
use), and its HTTP server (`serve --mcp HOST:PORT`) or its stdio loop (`evigate mcp`)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evigate.server.grpc.servicers import MetricsObserver
from evigate.server.mcp.http import McpHttpServer
from evigate.server.mcp.inputs import Limits
from evigate.server.mcp.server import McpUseCases, build_server
from evigate.server.settings import ConfigError, Settings
from evigate.server.tools import knowledge_dir
from evigate.server.usecases.agent_queries import AgentQueryUseCase
from evigate.server.usecases.chat import ChatUseCase
from evigate.server.usecases.check import CheckUseCase
from evigate.server.usecases.feedback import FeedbackUseCase
from evigate.server.usecases.trace import TraceUseCase

if TYPE_CHECKING:
    from evigate.server.app import App

__all__ = ["McpHttpServer", "McpOptions", "mcp_use_cases", "start_mcp_http"]


@dataclass(frozen=True)
class McpOptions:
    """`serve --mcp HOST:PORT` (PORT or :PORT alone: loopback) and `--mcp-allowed-origin`."""

    listen: str
    allowed_origins: tuple[str, ...] = ()

    def address(self) -> tuple[str, int]:
        host, _, port = self.listen.strip().rpartition(":")
        if not port.isdigit():
            raise ConfigError(f"mcp: expected HOST:PORT or PORT, got {self.listen!r}")
        return host.strip("[]") or "127.0.0.1", int(port)


def mcp_use_cases(app: App) -> McpUseCases:
    """Call after app.start(): the App's started parts."""
    s = app.settings
    if app.database is None or app.pipeline is None or app.tools is None:
        raise RuntimeError("the App has not started")
    repo = app.database.repo
    cases = app.cases(repo)
    return McpUseCases(
        chat=ChatUseCase(app.pipeline, MetricsObserver(app.metrics)),
        check=CheckUseCase(repo, app.catalog),
        traces=TraceUseCase(repo),
        feedback=FeedbackUseCase(repo, app.traces.invalidate, cases),
        cases=cases,
        queries=AgentQueryUseCase(repo, app.tools, s.grpc.owner, invalidate=app.traces.invalidate),
        limits=Limits(s.limits.query_chars, s.limits.claims, s.limits.bindings, s.limits.excerpt_chars),
        runbooks=knowledge_dir(s.sources.data_dir),
        viewer_url=app.web.url if app.web is not None else None,
    )


async def start_mcp_http(app: App, options: McpOptions) -> McpHttpServer:
    host, port = options.address()
    s = app.settings
    server = McpHttpServer(
        build_server(mcp_use_cases(app)),
        host,
        port,
        s.auth.tokens,
        allowed_origins=options.allowed_origins,
        grace_s=s.grpc.grace_period_s,
    )
    await server.start()
    return server


def stdio_settings(settings: Settings) -> Settings:
    """`evigate mcp` runs the service's parts for one local client (App without gRPC: no port at
    all), no web viewer, no metrics port, and its own owner name so that its start never fails the
    sessions of an `evigate serve` sharing the database (a restarted `evigate mcp` fails the
    sessions its crashed predecessor left RUNNING)."""
    name = settings.grpc.instance_name or f"{socket.gethostname()}:mcp-stdio"
    return settings.replace(web="", metrics_port=0, instance_name=name)


async def serve_stdio(settings: Settings) -> None:
    """MCP over this process's stdin / stdout until the client closes them."""
    from evigate.server.app import App, Components

    app = App(stdio_settings(settings), Components(grpc=False))
    try:
        await app.start()
        await build_server(mcp_use_cases(app)).run_stdio_async()
    finally:
        await app.stop(grace=0)
