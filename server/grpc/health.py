"""grpc.health.v1 whose status tells the truth about the database.

A background task pings the database every interval and flips every service (and the overall
"" entry) between SERVING and NOT_SERVING; the same loop refreshes the job-queue gauges. On
shutdown every entry goes NOT_SERVING for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from grpc_health.v1 import health, health_pb2

from evigate.server.grpc.metrics import Metrics
from evigate.server.tasks import cancel_and_wait
from evigate.storage import Database

log = logging.getLogger("evigate.health")
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class HealthChecker:
    def __init__(
        self, database: Database, services: Sequence[str], interval_s: float, metrics: Metrics
    ) -> None:
        self.servicer = health.aio.HealthServicer()
        self._database = database
        self._services = ("", *services)
        self._interval = interval_s
        self._metrics = metrics
        self._task: asyncio.Task[None] | None = None
        self.serving: bool | None = None

    async def check_once(self) -> bool:
        up = await self._database.ping()
        self._metrics.database_up.set(1 if up else 0)
        if up != self.serving:
            for service in self._services:
                await self.servicer.set(service, SERVING if up else NOT_SERVING)
            if self.serving is not None or not up:
                log.log(logging.INFO if up else logging.WARNING, "health changed", extra={"serving": up})
            self.serving = up
        if up:
            with contextlib.suppress(Exception):  # gauges are best effort; health is not
                stats = await self._database.repo.job_stats()
                self._metrics.set_job_stats(
                    stats.pending, stats.running, stats.failed, stats.done, stats.oldest_pending_age_seconds
                )
        return up

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
