"""What the service's health loop reads (server/grpc/health.py): whether the database answers, and
the job queue's counts for the gauges, so the transport never holds the database itself."""

from __future__ import annotations

from evigate.storage import Database
from evigate.storage.records import JobStats


class ServiceHealth:
    def __init__(self, database: Database) -> None:
        self._database = database

    async def database_up(self) -> bool:
        return await self._database.ping()

    async def job_stats(self) -> JobStats:
        return await self._database.repo.job_stats()
