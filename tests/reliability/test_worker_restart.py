"""A worker restarted under the same name releases the leases its earlier run still holds, at start,
instead of waiting for them to end (issue 19, item 10); another name's leases are left alone. Runs
on SQLite and MariaDB (the shared `db` fixture)."""

from __future__ import annotations

import asyncio

from evigate.server.worker import EvaluationWorker, WorkerSettings
from evigate.storage import Database

LEASE_S = 3600.0  # far longer than the test: only a release at start can free the job


async def _finished(db: Database, session_id: str) -> None:
    await db.repo.create_session(session_id, "payment-service HighCPUUsage?", "en", "test")
    await db.repo.finish_success(session_id, "answer", {}, {"verdict": "PASS", "round": 1}, [], {})


async def test_a_restarted_worker_releases_its_own_leases_and_only_those(db: Database) -> None:
    await _finished(db, "mine")
    [mine] = await db.repo.claim_jobs("host-a:50051/server/dead0001", "evidence_score", 1, LEASE_S)
    await _finished(db, "theirs")
    [theirs] = await db.repo.claim_jobs("host-b:50051/server/live0001", "evidence_score", 1, LEASE_S)
    assert (mine.session_id, theirs.session_id) == ("mine", "theirs")

    worker = EvaluationWorker(db.repo, WorkerSettings(poll_interval=0.05), name="host-a:50051/server")
    worker.start()
    try:
        async with asyncio.timeout(20):
            while (await db.repo.job_stats()).done < 1:  # noqa: ASYNC110 - polling the database
                await asyncio.sleep(0.05)
    finally:
        await worker.stop()
    stats = await db.repo.job_stats()
    assert (stats.done, stats.running, stats.pending) == (1, 1, 0)
    session = await db.repo.get_session("mine")
    assert session is not None and "evidence_score" in (session.self_evaluation or {})
    assert worker.worker_id.startswith("host-a:50051/server/")


async def test_release_jobs_matches_the_prefix_literally(db: Database) -> None:
    await _finished(db, "s1")
    await db.repo.claim_jobs("a_b/server/x", "evidence_score", 1, LEASE_S)
    assert await db.repo.release_jobs("a%/") == 0  # LIKE wildcards in a name are not wildcards
    assert await db.repo.release_jobs("a_b/") == 1
    assert len(await db.repo.claim_jobs("next/server/y", "evidence_score", 5, LEASE_S)) == 1
