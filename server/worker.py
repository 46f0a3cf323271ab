"""The evidence-score worker: turns pending evaluation jobs into self_evaluation.

It runs inside every server process (and alone as `evigate worker`). Jobs are claimed with a lease,
so a job held by a crashed worker is claimed again once its lease ends, and several replicas never
run the same job at once. The answer is never delayed by it: jobs are enqueued with the SUCCESS.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass

from rules import score
from rules.types import ScoreFacts
from storage.errors import DatabaseUnavailable
from storage.records import JobRecord
from storage.repository import Repository

log = logging.getLogger("evigate.worker")
EVIDENCE_SCORE = "evidence_score"


@dataclass(frozen=True)
class WorkerSettings:
    enabled: bool = True
    poll_interval: float = 0.5  # seconds between polls when the queue was empty
    lease_seconds: float = 30.0
    batch_size: int = 16
    max_attempts: int = 5
    retry_delay_seconds: float = 2.0


async def evaluate_session(repo: Repository, session_id: str) -> dict[str, object] | None:
    """Computes and writes one session's evidence score; None when the session is gone."""
    session = await repo.get_session(session_id)
    if session is None:
        return None
    invocations = await repo.list_invocations(session_id)
    facts = [
        ScoreFacts(
            tool_name=inv.tool_name,
            status=inv.status,
            evidence_status=str((inv.retrieval_details or {}).get("evidence_status", "")),
            match_level=str((inv.retrieval_details or {}).get("match_level") or "none"),
        )
        for inv in invocations
    ]
    result = score.evaluate(session.status, facts).to_seed()
    await repo.write_evidence_score(session_id, result)
    return result


class EvaluationWorker:
    def __init__(self, repo: Repository, settings: WorkerSettings, worker_id: str | None = None) -> None:
        self._repo = repo
        self._settings = settings
        self.worker_id = worker_id or f"worker-{uuid.uuid4().hex[:12]}"
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Poll now instead of at the next interval (called after a session finishes)."""
        self._wake.set()

    async def run_once(self) -> int:
        """Claims and runs one batch; returns how many jobs were handled."""
        jobs = await self._repo.claim_jobs(
            self.worker_id, EVIDENCE_SCORE, self._settings.batch_size, self._settings.lease_seconds
        )
        for job in jobs:
            await self._handle(job)
        return len(jobs)

    async def _handle(self, job: JobRecord) -> None:
        try:
            await evaluate_session(self._repo, job.session_id)
        except DatabaseUnavailable:
            raise  # the lease will expire and the job be claimed again
        except Exception as error:
            log.exception("evaluation failed", extra={"session_id": job.session_id, "job_id": job.id})
            await self._repo.fail_job(
                job.id,
                self.worker_id,
                f"{type(error).__name__}: {error}",
                self._settings.max_attempts,
                self._settings.retry_delay_seconds * (2 ** max(0, job.attempts - 1)),
            )
        else:
            await self._repo.complete_job(job.id, self.worker_id)

    async def run_forever(self) -> None:
        while True:
            try:
                handled = await self.run_once()
            except DatabaseUnavailable:
                handled = 0
                log.warning("database unavailable; evaluation worker waiting")
            if handled:
                continue
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._settings.poll_interval)

    def start(self) -> None:
        if self._settings.enabled and self._task is None:
            self._task = asyncio.create_task(self.run_forever(), name="evaluation-worker")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
