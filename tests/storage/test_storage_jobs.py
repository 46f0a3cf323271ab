"""The durable job queue: leases, reclaim, retries, stats — on SQLite and MariaDB.

Time is driven through the `now` arguments, never by sleeping."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from evigate.storage import Database
from tests.storage.storage_helpers import finished_session

KIND = "evidence_score"
T0 = datetime(2030, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def _enqueue(db: Database, count: int) -> list[int]:
    return [await db.repo.enqueue_job(KIND, None, {"n": n, "文本": "🙂"}) for n in range(count)]


async def test_lease_holds_then_expires_and_job_is_reclaimed(db: Database) -> None:
    (job_id,) = await _enqueue(db, 1)
    (claimed,) = await db.repo.claim_jobs("w1", KIND, 10, 30, now=at(0))
    assert (claimed.id, claimed.attempts, claimed.payload) == (job_id, 1, {"n": 0, "文本": "🙂"})
    # While w1's lease holds nobody else gets the job...
    assert await db.repo.claim_jobs("w2", KIND, 10, 30, now=at(1)) == []
    assert await db.repo.claim_jobs("w2", KIND, 10, 30, now=at(29.999)) == []
    # ...and once it ends (w1 presumed dead) w2 does, as a second attempt.
    (reclaimed,) = await db.repo.claim_jobs("w2", KIND, 10, 30, now=at(30))
    assert (reclaimed.id, reclaimed.attempts) == (job_id, 2)
    # The late w1 lost the lease: it can neither complete nor fail the job.
    assert not await db.repo.complete_job(job_id, "w1")
    await db.repo.fail_job(job_id, "w1", "late", max_attempts=1, retry_delay_seconds=0, now=at(31))
    assert (await db.repo.job_stats(now=at(31))).running == 1
    assert await db.repo.complete_job(job_id, "w2")
    assert not await db.repo.complete_job(job_id, "w2")
    stats = await db.repo.job_stats(now=at(40))
    assert (stats.pending, stats.running, stats.done, stats.failed) == (0, 0, 1, 0)
    assert await db.repo.claim_jobs("w3", KIND, 10, 30, now=at(10_000)) == []


async def test_claims_respect_kind_and_limit(db: Database) -> None:
    ids = await _enqueue(db, 5)
    await db.repo.enqueue_job("other", None, {})
    first = await db.repo.claim_jobs("w1", KIND, 2, 60, now=at(0))
    second = await db.repo.claim_jobs("w2", KIND, 10, 60, now=at(0))
    assert [j.id for j in first] == ids[:2]
    assert [j.id for j in second] == ids[2:]
    assert await db.repo.claim_jobs("w3", KIND, 0, 60, now=at(0)) == []


async def test_concurrent_workers_never_share_a_job(db: Database) -> None:
    ids = await _enqueue(db, 40)
    batches = await asyncio.gather(*(db.repo.claim_jobs(f"w{i}", KIND, 3, 60, now=at(0)) for i in range(8)))
    claimed = [job.id for batch in batches for job in batch]
    assert len(claimed) == len(set(claimed)) == 24
    assert set(claimed) <= set(ids)


async def test_fail_job_backs_off_then_fails_keeping_the_error(db: Database) -> None:
    (job_id,) = await _enqueue(db, 1)
    (job,) = await db.repo.claim_jobs("w", KIND, 1, 60, now=at(0))
    await db.repo.fail_job(job_id, "w", "boom 1", max_attempts=3, retry_delay_seconds=10, now=at(1))
    assert (await db.repo.job_stats(now=at(1))).pending == 1
    assert await db.repo.claim_jobs("w", KIND, 1, 60, now=at(10.9)) == []  # first retry after 10 s
    (job,) = await db.repo.claim_jobs("w", KIND, 1, 60, now=at(11))
    assert job.attempts == 2
    await db.repo.fail_job(job_id, "w", "boom 2", max_attempts=3, retry_delay_seconds=10, now=at(12))
    assert await db.repo.claim_jobs("w", KIND, 1, 60, now=at(31.9)) == []  # then 20 s
    (job,) = await db.repo.claim_jobs("w", KIND, 1, 60, now=at(32))
    assert job.attempts == 3
    await db.repo.fail_job(job_id, "w", "boom 3 错误", max_attempts=3, retry_delay_seconds=10, now=at(33))
    stats = await db.repo.job_stats(now=at(33))
    assert (stats.pending, stats.running, stats.failed) == (0, 0, 1)
    assert await db.repo.claim_jobs("w", KIND, 1, 60, now=at(100_000)) == []
    async with db.engine.connect() as conn:
        from sqlalchemy import select

        from evigate.storage.rows import JOB

        error = (await conn.execute(select(JOB.c.last_error).where(JOB.c.id == job_id))).scalar_one()
    assert error == "boom 3 错误"


async def test_job_stats_oldest_pending_age(db: Database) -> None:
    assert (await db.repo.job_stats()).oldest_pending_age_seconds == 0.0
    await finished_session(db, "s")  # finish_success enqueued one evidence_score job
    stats = await db.repo.job_stats(now=datetime.now(UTC) + timedelta(seconds=100))
    assert stats.pending == 1
    assert 99 < stats.oldest_pending_age_seconds < 200
