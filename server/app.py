"""The composition root: settings → Database, tool backend, agents, Pipeline, worker, grpc.aio server.

`App.start()` brings everything up in dependency order and `App.stop()` takes it down in reverse:
health NOT_SERVING, stop accepting calls, let in-flight calls finish within the grace period, then
stop the background tasks and close the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection

from evigate.rules.case_facts import load_fault_catalog
from evigate.rules.enums import SessionStatus
from evigate.rules.rule_catalog import RuleCatalog
from evigate.server.agent_setup import build_agents
from evigate.server.agents.base import AgentBackend
from evigate.server.grpc.health import HealthChecker, SourceProbe
from evigate.server.grpc.interceptors import AuthInterceptor, CallWrapper
from evigate.server.grpc.memory import RequestBytes
from evigate.server.grpc.metrics import Metrics
from evigate.server.grpc.registration import register
from evigate.server.grpc.servicers import (
    ChatServicer,
    FeedbackServicer,
    GatekeeperServicer,
    MetricsObserver,
    TraceServicer,
)
from evigate.server.grpc.tls import server_credentials
from evigate.server.grpc.validation import Limits
from evigate.server.live_sources import build_sources, build_tools
from evigate.server.mcp_setup import McpHttpServer, McpOptions, start_mcp_http
from evigate.server.opinion_worker import opinion_worker
from evigate.server.pipeline import Pipeline
from evigate.server.pipeline.orchestrator import PipelineSettings
from evigate.server.settings import ConfigError, GrpcSettings, Settings, split_host_port
from evigate.server.shutdown import STEPS_SHARE, Budget, start_watchdog
from evigate.server.sources.logs.building import IndexBuild
from evigate.server.sources.logs.log_config_file import LogConfigError
from evigate.server.sources.retrieval.semantic_knowledge import SemanticKnowledge
from evigate.server.sources.retrieval.store import SqliteVectorStore
from evigate.server.sources.services import ServiceCatalog
from evigate.server.sources.source_set import SourceSet
from evigate.server.tool_sources import (
    build_knowledge_search,
    build_names_embedder,
    logs_settings,
    start_log_index,
)
from evigate.server.tools import ToolError, build_backend, default_registry
from evigate.server.tools.service_catalog_setup import open_service_catalog
from evigate.server.usecases.cases import CaseUseCase
from evigate.server.usecases.chat import ChatUseCase
from evigate.server.usecases.check import CheckUseCase
from evigate.server.usecases.feedback import FeedbackUseCase
from evigate.server.usecases.health import ServiceHealth
from evigate.server.usecases.trace import TraceUseCase
from evigate.server.usecases.trace_cache import TraceCache
from evigate.server.web.app import WebServer, web_server
from evigate.server.worker import EvaluationWorker, worker_settings
from evigate.storage import Database, Repository
from evigate.v1 import (
    chat_service_pb2,
    feedback_service_pb2,
    gatekeeper_service_pb2,
    trace_service_pb2,
)
from evigate.v1.trace_service_pb2 import GetTraceResponse

log = logging.getLogger("evigate.app")
HEALTH_SERVICE = "grpc.health.v1.Health"
OnReady = Callable[["App"], None]


def _service(module: Any) -> ServiceDescriptor:
    """The one service a `*_service.proto` file (or health.proto) defines."""
    (service,) = module.DESCRIPTOR.services_by_name.values()
    return service  # type: ignore[no-any-return]


CHAT, FEEDBACK, TRACE, GATEKEEPER = (
    _service(module)
    for module in (chat_service_pb2, feedback_service_pb2, trace_service_pb2, gatekeeper_service_pb2)
)
SERVICE_NAMES: tuple[str, ...] = tuple(s.full_name for s in (CHAT, FEEDBACK, TRACE, GATEKEEPER))


def server_options(g: GrpcSettings) -> list[tuple[str, int]]:
    """Channel arguments: message size limits and keepalive (see the README's Operations section)."""
    return [
        ("grpc.max_receive_message_length", g.max_request_bytes),
        ("grpc.max_send_message_length", g.max_message_bytes),
        ("grpc.keepalive_time_ms", int(g.keepalive_time_s * 1000)),
        ("grpc.keepalive_timeout_ms", int(g.keepalive_timeout_s * 1000)),
        ("grpc.http2.min_ping_interval_without_data_ms", int(g.keepalive_min_ping_interval_s * 1000)),
        ("grpc.keepalive_permit_without_calls", int(g.keepalive_permit_without_calls)),
        ("grpc.http2.max_pings_without_data", 0),
        # Requests are small: no flow-control windows grown by BDP probing, which let a burst of
        # large requests buffer megabytes per stream inside gRPC before any limit applies.
        ("grpc.http2.bdp_probe", 0),
    ]


@dataclass
class Components:
    """What tests may replace (e.g. a slow agent backend at shutdown); `mcp`: serve --mcp's MCP."""

    agents: AgentBackend | None = None
    catalog: RuleCatalog | None = None
    mcp: McpOptions | None = None
    grpc: bool = True  # False: no gRPC server, no port (`evigate mcp` over stdio has no gRPC clients)


class App:
    def __init__(self, settings: Settings, components: Components | None = None) -> None:
        self.settings = settings
        self._components = components or Components()
        self.metrics = Metrics()
        self.database: Database | None = None
        self.health: HealthChecker | None = None
        self.worker: EvaluationWorker | None = None
        self.opinions: EvaluationWorker | None = None  # the LLM opinion's, when configured
        # GetTrace replies; the worker invalidates them
        self.traces: TraceCache[GetTraceResponse] = TraceCache(settings.grpc.trace_cache_ttl_s)
        self.pipeline: Pipeline | None = None
        self.services: ServiceCatalog | None = None
        self.tools: SourceSet | None = None
        self.knowledge: SemanticKnowledge | None = None
        self.log_index: IndexBuild | None = None  # the log tree's index, built from start-up
        self._vector_cache: SqliteVectorStore | None = None
        self.server: grpc.aio.Server | None = None
        self.port = 0
        self.metrics_port = 0
        self.web: WebServer | None = None
        self.mcp: McpHttpServer | None = None  # MCP for other agents: the same use cases, in this loop
        self._stopped = asyncio.Event()
        self._ended = asyncio.Event()  # stop() is over

    def _wake_worker(self, session_id: str) -> None:
        """A session just committed SUCCESS with its evaluation job: claim it now, not at the next poll."""
        if self.worker is not None:
            self.worker.wake()

    def _count_disagreement(self, item: str) -> None:
        self.metrics.llm_opinion_disagreements.labels(item).inc()

    def _count_failed(self, session_id: str, kind: str) -> None:
        self.metrics.sessions.labels(SessionStatus.FAILED, kind).inc()

    @property
    def address(self) -> str:
        host, _ = split_host_port(self.settings.grpc.listen)
        return f"{host}:{self.port}"

    async def start(self) -> None:
        s, db, owner = self.settings, self.settings.storage, self.settings.grpc.owner
        if not db.database_url:
            db.state_dir.mkdir(parents=True, exist_ok=True)
        self.database = await Database.open(
            db.resolved_database_url, pool_size=db.db_pool_size, timeout_s=db.db_timeout_s
        )
        repo = self.database.repo
        self.catalog = catalog = self._components.catalog or default_registry().catalog()  # + tools' table
        self.knowledge, self._vector_cache = build_knowledge_search(s, self.database)
        self.tools = tools = self._tools(repo, self.knowledge)
        self.log_index = start_log_index(tools, on_ready=self._logs_indexed)
        await self._index_knowledge(self.knowledge)
        # Offline agents query a metric a question names only when there is a Prometheus to ask.
        signals = tools.signals
        aliases, refresh_s = s.sources.service_aliases_file, s.sources.service_catalog_refresh_s
        self.services = await open_service_catalog(tools, aliases, refresh_s, build_names_embedder(s))
        agents = self._components.agents or build_agents(
            s, self.services, signals, next(iter(tools.cluster), None)
        )
        from evigate.server.skills import load_skills

        self.pipeline = pipeline = Pipeline(
            repo,
            tools,
            agents,
            load_skills(),
            catalog,
            PipelineSettings(
                max_rounds=s.agents.max_rounds,
                owner=owner,
                on_success=self._wake_worker,
                on_failed=self._count_failed,
            ),
        )
        orphaned = await repo.fail_orphaned_sessions(owner, "the server restarted while it was running")
        if orphaned:
            log.warning("failed orphaned sessions", extra={"count": orphaned})
            # Ended here, by this start: their callers saw the connection drop.
            self.metrics.sessions.labels(SessionStatus.FAILED, "server_restarted").inc(orphaned)

        probes: list[SourceProbe] = list(tools.watched())
        if self.log_index is not None:
            probes.append(self.log_index)
        self.health = HealthChecker(
            ServiceHealth(self.database), SERVICE_NAMES, db.health_check_interval_s, self.metrics, probes
        )
        await self.health.start()
        if self._components.grpc:
            server = self._grpc_server(pipeline, repo, catalog, self.health)
            try:
                tls, at = server_credentials(s), s.grpc.listen
                self.port = server.add_insecure_port(at) if tls is None else server.add_secure_port(at, tls)
            except RuntimeError as error:  # grpc's "Failed to bind"
                raise OSError(f"cannot listen on {s.grpc.listen}: {error}") from None
            if self.port == 0:
                raise OSError(f"cannot listen on {s.grpc.listen}")
            await server.start()
            self.server = server
        self._start_workers(repo)
        if s.metrics.port:
            self.metrics_port = self.metrics.serve(s.metrics.host, s.metrics.port)
        if s.web.address:  # the trace viewer: the servicers' use cases, in this event loop
            skills = sorted(skill.name for skill in load_skills())
            self.web = web_server(repo, self.cases(repo), s, self.traces.invalidate, skills)
            await self.web.start()
        self.mcp = await start_mcp_http(self, self._components.mcp) if self._components.mcp else None
        log.info(
            "serving",
            extra={
                "address": self.address if self.server is not None else None,
                "tls": s.tls.enabled,
                "auth": s.auth.enabled,
                "agents": agents.name,
            },
        )

    def _tools(self, repo: Repository, knowledge: SemanticKnowledge) -> SourceSet:
        """The files' sources (alerts, logs, knowledge, cases) with the live sources where configured."""
        s = self.settings
        try:
            files = build_backend(
                s.sources.data_dir,
                repo,
                logs=logs_settings(s),
                knowledge=knowledge,
                embedder=knowledge.index.embedder,
            )
        except LogConfigError as error:
            raise ConfigError(f"logs_config: {error}") from None
        except ValueError as error:
            raise ConfigError(f"data_dir: {error}") from None
        sources = build_sources(s)
        if sources.configured():
            log.info("live sources", extra={c.name: c.describe() for c in sources.configured()})
        return build_tools(s, files, sources, knowledge.index.embedder)

    async def _logs_indexed(self) -> None:
        if self.services is not None:  # services named only inside log records are known now
            await self.services.refresh()

    def _start_workers(self, repo: Repository) -> None:
        """The evidence-score worker, and the LLM-opinion worker when one is configured."""
        s = self.settings
        self.worker = EvaluationWorker(
            repo,
            worker_settings(s),
            on_scored=self.traces.invalidate,
            name=f"{s.grpc.owner}/server",
        )
        self.worker.start()
        self.opinions = opinion_worker(
            s,
            repo,
            self.traces.invalidate,
            self._count_disagreement,
            name=f"{s.grpc.owner}/opinion",
        )
        if self.opinions is not None:
            self.opinions.start()

    def cases(self, repo: Repository) -> CaseUseCase:
        return CaseUseCase(repo, load_fault_catalog(self.settings.sources.case_categories_file))

    @staticmethod
    async def _index_knowledge(knowledge: SemanticKnowledge) -> None:
        """Index the knowledge files before serving: only texts the vector cache lacks are embedded
        (all of them once per cache, none on a restart). A missing or corrupt knowledge directory is
        the tool's failure to report per call, not a reason not to start."""
        try:
            await knowledge.refresh_files()
        except ToolError as error:
            log.warning("knowledge not indexed", extra={"error": str(error)})

    def _grpc_server(
        self, pipeline: Pipeline, repo: Repository, catalog: RuleCatalog, health: HealthChecker
    ) -> grpc.aio.Server:
        """The grpc.aio server with every service, health and reflection registered (not bound)."""
        s = self.settings
        limits = Limits(s.limits.query_chars, s.limits.claims, s.limits.bindings, s.limits.excerpt_chars)
        calls = CallWrapper(self.metrics, RequestBytes(s.grpc.max_request_bytes_in_flight))
        interceptors: list[grpc.aio.ServerInterceptor] = []
        if s.auth.enabled:
            interceptors.append(AuthInterceptor(s.auth.tokens, s.auth.exempt_health, calls.wrap))
        server = grpc.aio.server(
            interceptors=interceptors,
            options=server_options(s.grpc),
            # Bounds the requests held in memory at once: beyond it calls are refused before they
            # are read into Python (RESOURCE_EXHAUSTED), so a burst of large requests cannot pile up.
            maximum_concurrent_rpcs=s.grpc.max_concurrent_rpcs,
        )
        traces = self.traces
        servicers: list[tuple[ServiceDescriptor, object]] = [
            (CHAT, ChatServicer(ChatUseCase(pipeline, MetricsObserver(self.metrics)), limits)),
            (FEEDBACK, FeedbackServicer(FeedbackUseCase(repo, traces.invalidate, self.cases(repo)))),
            (TRACE, TraceServicer(TraceUseCase(repo), traces, self.cases(repo))),
            (GATEKEEPER, GatekeeperServicer(CheckUseCase(repo, catalog), limits)),
            (_service(health_pb2), health.servicer),
        ]
        for service, servicer in servicers:
            register(server, service, servicer, calls.wrap)
        reflection.enable_server_reflection((*SERVICE_NAMES, HEALTH_SERVICE, reflection.SERVICE_NAME), server)
        return server

    async def stop(self, grace: float | None = None) -> None:
        """Graceful shutdown within `grace + shutdown_timeout_s` whatever the database does
        (server.shutdown); safe to call twice."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        grace = self.settings.grpc.grace_period_s if grace is None else grace
        log.info("shutting down", extra={"grace_period_s": grace})
        try:
            budget = Budget(grace + self.settings.grpc.shutdown_timeout_s * STEPS_SHARE)
            if self.health is not None:
                await budget.run("health NOT_SERVING", self.health.shutdown())
            ends = [end.stop(grace) for end in (self.web, self.mcp) if end is not None]  # viewer, MCP
            calls = [*ends, self.server.stop(grace)] if self.server is not None else ends
            await budget.run("calls in flight", asyncio.gather(*calls))
            await budget.run("evaluation worker", self.worker.stop() if self.worker else None)
            await budget.run("opinion worker", self.opinions.stop() if self.opinions else None)
            await budget.run("log index build", self.log_index.stop() if self.log_index else None)
            await budget.run("service catalog refresh", self.services.stop() if self.services else None)
            await budget.run("pipeline", self.pipeline.aclose() if self.pipeline else None)
            # the live sources' pooled HTTP clients
            await budget.run("live sources", self.tools.aclose() if self.tools is not None else None)
            await budget.run("health checks", self.health.stop() if self.health else None)
            self.metrics.stop()
            if self._vector_cache is not None:
                self._vector_cache.close()
            await budget.run("database", self.database.close() if self.database else None)
        finally:
            self._ended.set()
        log.info("stopped")

    async def wait(self) -> None:
        """Until stop() has ended (not until the gRPC server says it has: stop() bounds that)."""
        await self._ended.wait()


async def serve(settings: Settings, on_ready: OnReady | None = None, mcp: McpOptions | None = None) -> None:
    """Runs until SIGTERM or SIGINT, then shuts down gracefully; `mcp`: also serve MCP over HTTP.
    The process is gone within `grace_period_s + shutdown_timeout_s` of the first signal
    (server.shutdown's watchdog)."""
    app = App(settings, Components(mcp=mcp))
    try:
        await app.start()
    except BaseException:
        await app.stop(grace=0)
        raise
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []

    def on_signal(signum: int) -> None:
        log.info("signal received", extra={"signal": signal.Signals(signum).name})
        if not stopping:
            start_watchdog(settings.grpc.grace_period_s + settings.grpc.shutdown_timeout_s)
            stopping.append(asyncio.create_task(app.stop()))
        elif app.server is not None:  # a second signal: cancel the in-flight calls now
            stopping.append(asyncio.create_task(app.server.stop(0)))

    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, on_signal, signum)
    if on_ready is not None:
        on_ready(app)
    try:
        await app.wait()  # a second signal's task is not waited for: stop() bounds the server's end
    finally:
        await app.stop()


def registered_services() -> Sequence[str]:
    return SERVICE_NAMES
