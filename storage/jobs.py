"""The durable job queue (evidence_score evaluations first): lease-based claims.

MySQL/MariaDB claims with `SELECT … FOR UPDATE SKIP LOCKED`, so concurrent workers skip each
other's rows instead of waiting. SQLite has one writer at a time: the claim runs in a
`BEGIN IMMEDIATE` transaction (see storage.db), which makes select-then-update atomic.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import CursorResult, Insert, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from evigate.storage.records import JobRecord, JobStats, JsonDict
from evigate.storage.rows import JOB, job_record
from evigate.storage.runner import Runner
from evigate.storage.types import utcnow

PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"
EVIDENCE_SCORE = "evidence_score"
MAX_ERROR_CHARS = 8000


def inserted_id(result: CursorResult[Any]) -> int:
    key = result.inserted_primary_key
    if key is None:  # pragma: no cover - every table here has an integer key
        raise RuntimeError("no primary key returned by INSERT")
    return int(key[0])


def job_insert(kind: str, session_id: str | None, payload: JsonDict, now: datetime) -> Insert:
    return insert(JOB).values(
        kind=kind,
        session_id=session_id,
        payload=payload,
        status=PENDING,
        attempts=0,
        available_at=now,
        created_at=now,
        updated_at=now,
    )


class JobQueue:
    _runner: Runner

    async def enqueue_job(self, kind: str, session_id: str | None, payload: JsonDict) -> int:
        async def work(conn: AsyncConnection) -> int:
            result = await conn.execute(job_insert(kind, session_id, payload, utcnow()))
            return inserted_id(result)

        return await self._runner.write(work)

    async def claim_jobs(
        self, worker_id: str, kind: str, limit: int, lease_seconds: float, *, now: datetime | None = None
    ) -> list[JobRecord]:
        """Lease up to `limit` claimable jobs to `worker_id`: pending ones whose retry time has come
        and running ones whose lease has ended (their worker is presumed dead). Each claim counts as
        an attempt. `now` exists for tests that drive the clock."""
        if limit <= 0:
            return []
        at = now or utcnow()
        until = at + timedelta(seconds=lease_seconds)

        async def work(conn: AsyncConnection) -> list[JobRecord]:
            ids: list[int] = []
            # One status per query so the scan follows ix_job_claim in order and locks only the
            # rows it returns; an IN over both statuses makes InnoDB sort, locking every match.
            for status in (PENDING, RUNNING):
                if len(ids) >= limit:
                    break
                candidates = (
                    select(JOB.c.id)
                    .where(JOB.c.kind == kind, JOB.c.status == status, JOB.c.available_at <= at)
                    .order_by(JOB.c.available_at, JOB.c.id)
                    .limit(limit - len(ids))
                    .with_for_update(skip_locked=True)
                )
                ids.extend((await conn.execute(candidates)).scalars())
            if not ids:
                return []
            await conn.execute(
                update(JOB)
                .where(JOB.c.id.in_(ids))
                .values(
                    status=RUNNING,
                    lease_owner=worker_id,
                    available_at=until,
                    attempts=JOB.c.attempts + 1,
                    updated_at=at,
                )
            )
            rows = await conn.execute(
                select(JOB.c.id, JOB.c.kind, JOB.c.session_id, JOB.c.attempts, JOB.c.payload)
                .where(JOB.c.id.in_(ids))
                .order_by(JOB.c.id)
            )
            return [job_record(row) for row in rows]

        return await self._runner.write(work)

    async def release_jobs(self, owner_prefix: str, *, now: datetime | None = None) -> int:
        """Puts back to pending, claimable at once, the running jobs leased to an owner whose id
        starts with `owner_prefix`: an earlier run of a worker now starting under the same name,
        so known to be dead (waiting for its leases to end would only delay the scores). Attempts
        are kept. Returns how many were released."""
        at = now or utcnow()

        async def work(conn: AsyncConnection) -> int:
            result = await conn.execute(
                update(JOB)
                .where(JOB.c.status == RUNNING, JOB.c.lease_owner.startswith(owner_prefix, autoescape=True))
                .values(status=PENDING, lease_owner=None, available_at=at, updated_at=at)
            )
            return int(result.rowcount)

        return await self._runner.write(work)

    async def complete_job(self, job_id: int, worker_id: str) -> bool:
        """False when the lease was lost (another worker reclaimed the job)."""

        async def work(conn: AsyncConnection) -> bool:
            result = await conn.execute(
                update(JOB)
                .where(JOB.c.id == job_id, JOB.c.status == RUNNING, JOB.c.lease_owner == worker_id)
                .values(status=DONE, last_error=None, updated_at=utcnow())
            )
            return result.rowcount == 1

        return await self._runner.write(work)

    async def fail_job(
        self,
        job_id: int,
        worker_id: str,
        error: str,
        max_attempts: int,
        retry_delay_seconds: float,
        *,
        now: datetime | None = None,
    ) -> None:
        """Back to pending after an exponential backoff (retry_delay × 2^(attempts−1)), or `failed`
        once `max_attempts` claims have failed; the error is kept either way. A worker that lost
        its lease changes nothing."""
        at = now or utcnow()

        async def work(conn: AsyncConnection) -> None:
            attempts = (
                await conn.execute(
                    select(JOB.c.attempts)
                    .where(JOB.c.id == job_id, JOB.c.status == RUNNING, JOB.c.lease_owner == worker_id)
                    .with_for_update()
                )
            ).scalar_one_or_none()
            if attempts is None:
                return
            values: dict[str, Any] = {"last_error": error[:MAX_ERROR_CHARS], "updated_at": at}
            if attempts >= max_attempts:
                values.update(status=FAILED)
            else:
                delay = retry_delay_seconds * 2 ** max(attempts - 1, 0)
                values.update(status=PENDING, lease_owner=None, available_at=at + timedelta(seconds=delay))
            await conn.execute(update(JOB).where(JOB.c.id == job_id).values(**values))

        await self._runner.write(work)

    async def job_stats(self, *, now: datetime | None = None) -> JobStats:
        at = now or utcnow()

        async def work(conn: AsyncConnection) -> JobStats:
            counts = {
                status: count
                for status, count in await conn.execute(
                    select(JOB.c.status, func.count()).group_by(JOB.c.status)
                )
            }
            oldest = (
                await conn.execute(select(func.min(JOB.c.created_at)).where(JOB.c.status == PENDING))
            ).scalar_one_or_none()
            age = max((at - oldest).total_seconds(), 0.0) if oldest is not None else 0.0
            return JobStats(
                pending=counts.get(PENDING, 0),
                running=counts.get(RUNNING, 0),
                failed=counts.get(FAILED, 0),
                done=counts.get(DONE, 0),
                oldest_pending_age_seconds=age,
            )

        return await self._runner.read(work)
