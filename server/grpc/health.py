"""grpc.health.v1 whose status tells the truth about the database.

A background task pings the database every interval and flips every service (and the overall
"" entry) between SERVING and NOT_SERVING; the same loop refreshes the job-queue gauges. On
shutdown every entry goes NOT_SERVING for good.

Sources (Prometheus, Alertmanager, the log tree) get an entry of their own, `evigate.source.<name>`,
checked on the same loop: a source that cannot be reached is NOT_SERVING there and logged, while the
service entries stay SERVING — the service still answers, and a call that needs the source is
recorded as failed, naming it (taking the whole service out of rotation would hide that answer).
A Check of a source's entry carries the source's latest detail (the failure, or the log index's
progress) in the trailing metadata `evigate-source-detail`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any, Protocol

import grpc
from grpc_health.v1 import health, health_pb2

from evigate.server.grpc.metrics import Metrics
from evigate.server.tasks import cancel_and_wait
from evigate.server.usecases.health import ServiceHealth

log = logging.getLogger("evigate.health")
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


SOURCE_PREFIX = "evigate.source."
DETAIL_KEY = "evigate-source-detail"


class _DetailedHealth(health.aio.HealthServicer):  # type: ignore[misc]
    """grpc.health.v1 whose Check of a source's entry also sends the source's detail."""

    def __init__(self, details: dict[str, str]) -> None:
        super().__init__()
        self._details = details

    async def Check(  # noqa: N802 - the generated service's method name
        self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> health_pb2.HealthCheckResponse:
        response = await super().Check(request, context)
        detail = self._details.get(request.service.removeprefix(SOURCE_PREFIX))
        if request.service.startswith(SOURCE_PREFIX) and detail:
            # Metadata values are ASCII: anything else in a server's message is escaped.
            context.set_trailing_metadata(
                ((DETAIL_KEY, detail.encode("ascii", "backslashreplace").decode()),)
            )
        return response


class SourceState(Protocol):
    @property
    def ready(self) -> bool: ...

    @property
    def detail(self) -> str | None: ...


class SourceProbe(Protocol):
    """A live source's client (server/sources: Prometheus, Alertmanager)."""

    @property
    def name(self) -> str: ...

    async def health(self) -> SourceState: ...


class HealthChecker:
    def __init__(
        self,
        database: ServiceHealth,
        services: Sequence[str],
        interval_s: float,
        metrics: Metrics,
        sources: Sequence[SourceProbe] = (),
    ) -> None:
        self.source_detail: dict[str, str] = {}
        self.servicer = _DetailedHealth(self.source_detail)
        self._sources = tuple(sources)
        self.source_ready: dict[str, bool] = {}
        self._database = database
        self._services = ("", *services)
        self._interval = interval_s
        self._metrics = metrics
        self._task: asyncio.Task[None] | None = None
        self.serving: bool | None = None

    async def check_once(self) -> bool:
        up = await self._database.database_up()
        self._metrics.database_up.set(1 if up else 0)
        if up != self.serving:
            for service in self._services:
                await self.servicer.set(service, SERVING if up else NOT_SERVING)
            if self.serving is not None or not up:
                log.log(logging.INFO if up else logging.WARNING, "health changed", extra={"serving": up})
            self.serving = up
        if up:
            with contextlib.suppress(Exception):  # gauges are best effort; health is not
                stats = await self._database.job_stats()
                self._metrics.set_job_stats(
                    stats.pending, stats.running, stats.failed, stats.done, stats.oldest_pending_age_seconds
                )
        if self._sources:
            await self._check_sources()
        return up

    async def _probe(self, source: SourceProbe) -> tuple[bool, str | None]:
        # Bounded by the interval: a source that hangs must not stall the database check.
        try:
            state = await asyncio.wait_for(source.health(), timeout=max(1.0, self._interval))
        except TimeoutError:
            return False, f"no health answer within {max(1.0, self._interval):g}s"
        return state.ready, state.detail

    async def _check_sources(self) -> None:
        states = await asyncio.gather(*(self._probe(s) for s in self._sources))
        for source, (ready, detail) in zip(self._sources, states, strict=True):
            self.source_detail[source.name] = detail or ""
            if self.source_ready.get(source.name) != ready:
                await self.servicer.set(SOURCE_PREFIX + source.name, SERVING if ready else NOT_SERVING)
                if source.name in self.source_ready or not ready:
                    level = logging.INFO if ready else logging.WARNING
                    log.log(level, "source health changed", extra={"source": source.name, "ready": ready,
                                                                   "detail": detail})  # fmt: skip
                self.source_ready[source.name] = ready

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                await self.check_once()
            except Exception:
                log.exception("health check failed")

    async def start(self) -> None:
        await self.check_once()
        self._task = asyncio.create_task(self._loop(), name="evigate-health")

    async def shutdown(self) -> None:
        """NOT_SERVING for good (first step of a graceful shutdown)."""
        await self.servicer.enter_graceful_shutdown()

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None
