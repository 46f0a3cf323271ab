"""The evidence-score worker: retries with backoff, failed after N attempts with the error kept,
`evigate worker` alone and `evigate jobs` reading the queue from the database."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import grpc
import pytest
from sqlalchemy import update

from evigate.rules import score
from evigate.server.worker import EvaluationWorker, WorkerSettings, evaluate_session
from evigate.storage import Database
from evigate.storage.rows import JOB
from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import QUESTIONS, Client, db_rows, self_evaluation, wait_for


@pytest.fixture
async def db(sqlite_url: str) -> AsyncIterator[Database]:
    database = await Database.open(sqlite_url)
    try:
        yield database
    finally:
        await database.close()


async def _success(db: Database, session_id: str) -> None:
    repo = db.repo
    await repo.create_session(session_id, "payment-service HighCPUUsage?", "en", "test")
    await repo.record_invocation(
        session_id,
        "query_metrics",
        {"service": "payment-service"},
        "success",
        None,
        {"alerts": []},
        {"evidence_status": "supported", "match_level": "none", "evidence_refs": []},
        1.0,
    )
    await repo.finish_success(session_id, "answer", {}, {"verdict": "PASS", "round": 1}, [], {})


def _job(url: str) -> tuple[Any, ...]:
    [row] = db_rows(
        url, "SELECT status, attempts, last_error, available_at, updated_at, lease_owner FROM job"
    )
    return row


def _seconds(later: Any, earlier: Any) -> float:
    parse = datetime.fromisoformat
    return (parse(str(later)) - parse(str(earlier))).total_seconds()


async def test_a_failing_evaluation_backs_off_then_fails_keeping_its_error(
    db: Database, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _success(db, "s1")

    def broken(*args: object, **kwargs: object) -> object:
        raise ValueError("score rules exploded")

    monkeypatch.setattr(score, "evaluate", broken)
    worker = EvaluationWorker(
        db.repo, WorkerSettings(max_attempts=3, retry_delay_seconds=10.0), worker_id="w1"
    )
    assert await worker.run_once() == 1
    status, attempts, error, available_at, updated_at, owner = _job(sqlite_url)
    assert (status, attempts, owner) == ("pending", 1, None)
    assert error == "ValueError: score rules exploded"
    assert _seconds(available_at, updated_at) == pytest.approx(10.0, abs=0.01)  # base delay
    assert await worker.run_once() == 0  # not before its retry time

    # Pretend the retry times came: the delay doubles per attempt, then the job fails for good.
    for expected_delay in (20.0, None):
        await _make_due(db)
        assert await worker.run_once() == 1
        status, attempts, error, available_at, updated_at, _ = _job(sqlite_url)
        if expected_delay is not None:
            assert (status, attempts) == ("pending", 2)
            assert _seconds(available_at, updated_at) == pytest.approx(expected_delay, abs=0.01)
    assert (status, attempts, error) == ("failed", 3, "ValueError: score rules exploded")
    stats = await db.repo.job_stats()
    assert (stats.pending, stats.running, stats.failed, stats.done) == (0, 0, 1, 0)
    evaluation = self_evaluation(sqlite_url, "s1")
    assert evaluation is not None and "evidence_score" not in evaluation  # stays null (docs/design.md §5.5)
    assert evaluation["verifier_evaluation"] == {"verdict": "PASS", "round": 1}


async def _make_due(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(update(JOB).values(available_at=datetime(2000, 1, 1, tzinfo=UTC)))


async def test_the_score_is_written_once_and_keeps_the_verifier_evaluation(
    db: Database, sqlite_url: str
) -> None:
    await _success(db, "s2")
    worker = EvaluationWorker(db.repo, WorkerSettings(), worker_id="w2")
    assert await worker.run_once() == 1
    first = self_evaluation(sqlite_url, "s2")
    assert first is not None
    assert first["evidence_score"] == 30 and first["source"] == "rule" and first["llm_opinion"] is None
    assert [f["name"] for f in first["factors"]] == ["has_successful_tool_call"]
    assert first["verifier_evaluation"] == {"verdict": "PASS", "round": 1}
    assert _job(sqlite_url)[:3] == ("done", 1, None)
    # Running the evaluation again (a worker that died after writing) changes nothing.
    before = db_rows(sqlite_url, "SELECT updated_at FROM diagnosis_session")
    again = await evaluate_session(db.repo, "s2")
    assert again is not None and again["evidence_score"] == 30
    assert db_rows(sqlite_url, "SELECT updated_at FROM diagnosis_session") == before
    assert await evaluate_session(db.repo, "missing") is None


def _evigate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evigate.server", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _start_worker(url: str, log: IO[str]) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "evigate.server",
        "worker",
        "--database-url",
        url,
        "--log-format",
        "json",
    ]
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


async def test_standalone_worker_drains_what_servers_left_and_jobs_shows_the_queue(
    servers: ServerFactory, sqlite_url: str, tmp_path: Path
) -> None:
    server = servers(sqlite_url)
    await server.start(args=["--no-worker-enabled"]).wait_ready()
    async with grpc.aio.insecure_channel(server.address) as channel:
        for n in range(3):
            await Client(channel).chat(QUESTIONS[n], session_id=f"standalone-{n}")
    server.kill(signal.SIGTERM)

    shown = _evigate("jobs", "--database-url", sqlite_url, "--json")
    assert shown.returncode == 0, shown.stderr
    stats = json.loads(shown.stdout)
    assert (stats["pending"], stats["running"], stats["failed"], stats["done"]) == (3, 0, 0, 0)
    assert stats["oldest_pending_age_seconds"] >= 0
    readable = _evigate("jobs", "--database-url", sqlite_url)
    assert "pending  3" in readable.stdout and "oldest pending age" in readable.stdout

    log = (tmp_path / "worker.log").open("w")
    worker = _start_worker(sqlite_url, log)
    try:

        def drained() -> bool:
            return bool(db_rows(sqlite_url, "SELECT COUNT(*) FROM job WHERE status = 'done'")[0][0] == 3)

        await wait_for(drained, 30, "the standalone worker finished every job")
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(20) == 0
        log.close()
    assert "worker stopped" in (tmp_path / "worker.log").read_text()
    done = json.loads(_evigate("jobs", "--database-url", sqlite_url, "--json").stdout)
    assert (done["pending"], done["done"], done["oldest_pending_age_seconds"]) == (0, 3, 0.0)


def test_jobs_says_clearly_when_the_database_is_unreachable() -> None:
    shown = _evigate("jobs", "--database-url", "mysql+aiomysql://root:@127.0.0.1:1/nowhere")
    assert shown.returncode == 1
    assert shown.stderr.startswith("evigate: cannot read the job queue: database unreachable"), shown.stderr
    assert "Traceback" not in shown.stderr


async def test_the_success_commit_wakes_the_worker_so_the_answer_never_waits_and_the_score_follows(
    servers: ServerFactory, sqlite_url: str
) -> None:
    """With polling every 60 s, the score still lands at once: the SUCCESS commit wakes the worker
    (and the reply did not wait for it: Chat returned before the job ran)."""
    server = servers(sqlite_url)
    await server.start(args=["--worker-poll-interval-s", "60"]).wait_ready()
    async with grpc.aio.insecure_channel(server.address) as channel:
        client = Client(channel)
        await client.chat(QUESTIONS[0], session_id="woken")  # first poll happens at start-up
        reply = await client.chat(QUESTIONS[1], session_id="woken-2")
    assert reply.status == 2  # SUCCESS

    def scored() -> bool:
        return db_rows(sqlite_url, "SELECT status FROM job WHERE session_id = 'woken-2'") == [("done",)]

    await wait_for(scored, 5, "the score within 5 s although the next poll is 60 s away")
    [(lag,)] = db_rows(
        sqlite_url,
        "SELECT (julianday(updated_at) - julianday(created_at)) * 86400000 FROM job"
        " WHERE session_id = 'woken-2'",
    )
    assert 0 <= lag < 2000, lag
