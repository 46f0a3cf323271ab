"""The evidence-score worker: turns pending evaluation jobs into self_evaluation.

It runs inside every server process (and alone as `evigate worker`). Jobs are claimed with a lease,
so a job held by a crashed worker is claimed again once its lease ends, and several replicas never
run the same job at once (the claim is `SELECT … FOR UPDATE SKIP LOCKED` on MariaDB, `BEGIN
IMMEDIATE` on SQLite). The answer is never delayed by it: the job is enqueued in the same transaction
as the SUCCESS and runs afterwards, here.

A failed evaluation goes back to the queue after an exponential backoff (storage doubles the base
delay per attempt) and is marked failed, its last error kept, after `max_attempts` claims. An
unreachable database is not the job's fault: the worker waits and the lease brings the job back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evigate.rules import score
from evigate.rules.types import ScoreFacts
from evigate.server.tasks import UNWIND_TIMEOUT_S, cancel_and_wait, within
from evigate.storage.errors import DatabaseUnavailable
from evigate.storage.records import JobRecord, JobStats
from evigate.storage.repository import Repository

if TYPE_CHECKING:
    from evigate.server.settings import Settings

log = logging.getLogger("evigate.worker")
EVIDENCE_SCORE = "evidence_score"


@dataclass(frozen=True)
class WorkerSettings:
    enabled: bool = True
    poll_interval: float = 0.5  # seconds between polls when the queue was empty
    lease_seconds: float = 30.0
    batch_size: int = 16
    max_attempts: int = 5
    retry_delay_seconds: float = 2.0  # base delay; storage doubles it per attempt


def worker_settings(settings: Settings) -> WorkerSettings:
    return WorkerSettings(
        enabled=settings.worker.enabled,
        poll_interval=settings.worker.poll_interval_s,
        lease_seconds=settings.worker.lease_s,
        batch_size=settings.worker.batch_size,
        max_attempts=settings.worker.max_attempts,
        retry_delay_seconds=settings.worker.retry_delay_s,
    )


async def evaluate_session(repo: Repository, session_id: str) -> dict[str, Any] | None:
    """Computes and writes one session's evidence score; None when the session is gone.

    A session that already has its score (a worker died between the write and completing the
    job) keeps it: the score is a pure function of the stored invocations, so it is written once."""
    session = await repo.get_session(session_id)
    if session is None:
        return None
    current = session.self_evaluation or {}
    if "evidence_score" in current:
        # Logged so a drill can tell "kept" from "lost": the write's own log line dies with a
        # worker killed between the write and the log.
        log.info("evidence score already written", extra={"session_id": session_id})
        return {k: v for k, v in current.items() if not k.startswith("verifier_evaluation")}
    invocations = await repo.list_invocations(session_id)
    facts = [ScoreFacts.from_seed(inv.tool_name, inv.status, inv.retrieval_details) for inv in invocations]
    result: dict[str, Any] = score.evaluate(session.status, facts).to_seed()
    await repo.write_evidence_score(session_id, result)
    log.info(
        "evidence score written",
        extra={"session_id": session_id, "evidence_score": result.get("evidence_score")},
    )
    return result


class EvaluationWorker:
    def __init__(
        self,
        repo: Repository,
        settings: WorkerSettings,
        worker_id: str | None = None,
        on_scored: Callable[[str], None] | None = None,
        *,
        name: str | None = None,
        kind: str = EVIDENCE_SCORE,
        run: Callable[[str], Awaitable[object]] | None = None,
        close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`name` is stable across restarts (`<instance name>/server`): the id is the name plus a
        random suffix, and on start the worker releases the leases an earlier run under the same
        name still holds, since that run is dead. Without a name nothing is released.

        `kind` and `run` choose the jobs: by default the evidence score; the composition root also
        runs one for the LLM opinion (server.usecases.opinion), with the same queue semantics;
        `close` releases what `run` holds (the opinion agent's HTTP client) at stop."""
        self._kind = kind
        self._run = run or (lambda session_id: evaluate_session(repo, session_id))
        self._close = close
        self._repo = repo
        self._settings = settings
        self._name = name
        self._released = name is None
        self.worker_id = worker_id or f"{name or 'worker'}/{uuid.uuid4().hex[:12]}"
        self._on_scored = on_scored  # after a session's score is stored (the server's GetTrace cache)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Poll now instead of at the next interval (called after a session finishes)."""
        self._wake.set()

    async def run_once(self) -> int:
        """Claims and runs one batch; returns how many jobs were handled."""
        jobs = await self._repo.claim_jobs(
            self.worker_id, self._kind, self._settings.batch_size, self._settings.lease_seconds
        )
        for job in jobs:
            await self._handle(job)
        return len(jobs)

    async def _handle(self, job: JobRecord) -> None:
        try:
            if job.session_id is not None:
                await self._run(job.session_id)
                if self._on_scored is not None:
                    self._on_scored(job.session_id)
        except DatabaseUnavailable:
            raise  # not the job's fault: the lease will expire and the job be claimed again
        except Exception as error:
            log.exception(
                "evaluation failed",
                extra={"session_id": job.session_id, "job_id": job.id, "attempt": job.attempts},
            )
            await self._repo.fail_job(
                job.id,
                self.worker_id,
                f"{type(error).__name__}: {error}",
                self._settings.max_attempts,
                self._settings.retry_delay_seconds,
            )
            return
        if not await self._repo.complete_job(job.id, self.worker_id):
            log.warning(
                "job lease lost before completion", extra={"session_id": job.session_id, "job_id": job.id}
            )

    async def release_previous_leases(self) -> None:
        if self._name is None:
            return
        released = await self._repo.release_jobs(f"{self._name}/")
        self._released = True
        if released:
            log.info("released the leases of an earlier run", extra={"name": self._name, "jobs": released})

    async def run_forever(self) -> None:
        while True:
            self._wake.clear()  # before the claim: a wake() during it triggers the next one at once
            try:
                if not self._released:  # retried on every poll until the database answers
                    await self.release_previous_leases()
                handled = await self.run_once()
            except DatabaseUnavailable as error:
                handled = 0
                log.warning("database unavailable; evaluation worker waiting", extra={"error": str(error)})
            except Exception:  # a bug here must not end evaluation for the process's lifetime
                handled = 0
                log.exception("evaluation worker poll failed")
            if handled:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._settings.poll_interval)

    def start(self) -> None:
        if self._settings.enabled and self._task is None:
            self._task = asyncio.create_task(self.run_forever(), name=f"{self._kind}-worker")

    async def stop(self) -> None:
        """Cancels the poll loop (a claim or job stuck on the database is waited for only
        UNWIND_TIMEOUT_S), then closes what `run` holds."""
        task, self._task = self._task, None
        await cancel_and_wait(task)
        close, self._close = self._close, None
        if close is not None:
            await within(f"{self._kind} worker close", UNWIND_TIMEOUT_S, close())


def format_stats(stats: JobStats) -> str:
    """`evigate jobs` readable output."""
    return (
        f"pending  {stats.pending}\n"
        f"running  {stats.running}\n"
        f"failed   {stats.failed}\n"
        f"done     {stats.done}\n"
        f"oldest pending age  {stats.oldest_pending_age_seconds:.1f}s"
    )


async def run_standalone(
    settings: Settings, extra: Callable[[Repository], list[EvaluationWorker]] | None = None
) -> None:
    """`evigate worker`: the evaluation worker alone (and `extra`'s, e.g. the LLM opinion's), until
    SIGTERM or SIGINT."""
    import signal

    from evigate.storage import Database

    database = await Database.open(
        settings.storage.resolved_database_url,
        pool_size=settings.storage.db_pool_size,
        timeout_s=settings.storage.db_timeout_s,
    )
    worker = EvaluationWorker(database.repo, worker_settings(settings), name=f"{settings.grpc.owner}/worker")
    others = extra(database.repo) if extra is not None else []
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    for each in (worker, *others):
        each.start()
    log.info("worker running", extra={"worker_id": worker.worker_id})
    try:
        await stop.wait()
    finally:
        for each in (worker, *others):
            await each.stop()
        await database.close()
        log.info("worker stopped", extra={"worker_id": worker.worker_id})


async def read_stats(settings: Settings) -> JobStats:
    """`evigate jobs`: the queue, read straight from the database (no server needed)."""
    from evigate.storage import Database

    database = await Database.open(settings.storage.resolved_database_url, pool_size=1)
    try:
        return await database.repo.job_stats()
    finally:
        await database.close()
