"""kill -9 with evaluations pending, expired leases, and sessions a crash left RUNNING."""

from __future__ import annotations

import asyncio
import collections
import signal
import socket

import grpc
import pytest

from evigate.storage import Database
from evigate.v1 import session_pb2
from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import QUESTIONS, Client, ServerProc, db_rows, self_evaluation, wait_for
from tests.support.fake_openai import FakeOpenAI, Hang

SUCCESS = session_pb2.SESSION_STATUS_SUCCESS
RESTART_REASON = "the server restarted while it was running"


def _score_writes(*procs: ServerProc) -> collections.Counter[str]:
    """session_id → how many times a worker wrote its evidence score (from the JSON logs)."""
    counts: collections.Counter[str] = collections.Counter()
    for proc in procs:
        for event in proc.log_events():
            if event.get("event") == "evidence score written":
                counts[str(event.get("session_id"))] += 1
    return counts


async def test_kill9_with_evaluations_pending_then_every_success_is_scored_once(
    servers: ServerFactory, any_url: str
) -> None:
    url = any_url
    server = servers(url, args=["--instance-name", "crashy"])
    # The in-process worker off: every evaluation is still pending when the process dies.
    await server.start(args=["--no-worker-enabled"]).wait_ready()
    session_ids = []
    async with grpc.aio.insecure_channel(server.address) as channel:
        client = Client(channel)
        for n in range(6):
            reply = await client.chat(QUESTIONS[n % len(QUESTIONS)], session_id=f"crash-{n}")
            assert reply.status == SUCCESS, reply.failure_reason
            session_ids.append(reply.session_id)
    jobs = db_rows(url, "SELECT session_id, status, attempts FROM job ORDER BY id")
    assert sorted(jobs) == sorted((sid, "pending", 0) for sid in session_ids)
    assert all("evidence_score" not in (self_evaluation(url, sid) or {}) for sid in session_ids)

    assert server.kill(signal.SIGKILL) == -signal.SIGKILL
    await server.start().wait_ready()

    def all_done() -> bool:
        return bool(db_rows(url, "SELECT COUNT(*) FROM job WHERE status <> 'done'")[0][0] == 0)

    await wait_for(all_done, 30, "every evaluation job done after the restart")
    jobs = db_rows(url, "SELECT session_id, status, attempts, last_error FROM job ORDER BY id")
    assert sorted(jobs) == sorted((sid, "done", 1, None) for sid in session_ids)
    for sid in session_ids:
        evaluation = self_evaluation(url, sid)
        assert evaluation is not None
        assert isinstance(evaluation["evidence_score"], int) and evaluation["source"] == "rule"
        assert evaluation["factors"], sid
        assert evaluation["verifier_evaluation"]["traceability_version"] == "v1"  # kept
    assert _score_writes(server) == dict.fromkeys(session_ids, 1)
    async with grpc.aio.insecure_channel(server.address) as channel:
        trace = (await Client(channel).trace(session_ids[0])).trace
        assert trace.evidence_score.source == "rule"
        assert trace.session.HasField("evidence_score")


async def test_a_job_whose_worker_died_is_claimed_again_after_its_lease(
    servers: ServerFactory, sqlite_url: str
) -> None:
    server = servers(sqlite_url, args=["--instance-name", "lease"])
    await server.start(args=["--no-worker-enabled"]).wait_ready()
    async with grpc.aio.insecure_channel(server.address) as channel:
        reply = await Client(channel).chat(QUESTIONS[0], session_id="leased")
    assert reply.status == SUCCESS
    server.kill(signal.SIGKILL)
    # A worker claims the job and dies before finishing it: only its lease remembers it.
    database = await Database.open(sqlite_url)
    try:
        [job] = await database.repo.claim_jobs("dead-worker", "evidence_score", 10, lease_seconds=1.5)
    finally:
        await database.close()
    assert job.session_id == "leased" and job.attempts == 1
    await server.start().wait_ready()

    def done() -> bool:
        return bool(db_rows(sqlite_url, "SELECT status FROM job")[0][0] == "done")

    await wait_for(done, 20, "the expired lease re-claimed and the job done")
    [(status, attempts, owner)] = db_rows(sqlite_url, "SELECT status, attempts, lease_owner FROM job")
    assert (status, attempts) == ("done", 2)
    assert owner.startswith("lease/")
    assert _score_writes(server) == {"leased": 1}


async def test_sessions_left_running_by_a_crash_are_failed_by_their_owner_only(
    servers: ServerFactory, mariadb_url: str
) -> None:
    """A real crash (kill -9 while the LLM hangs) leaves a RUNNING session; other owners' RUNNING
    sessions on the same database are left alone, also when both processes start at once."""
    with FakeOpenAI(default=Hang()) as fake:
        llm = ["--agent-backend", "llm", "--llm-base-url", fake.base_url, "--llm-model", "m"]
        # the model at every stage: each session waits on the hanging model from its first stage
        llm += ["--llm-max-retries", "0", "--llm-planner-anchor", "none"]
        # Default identity: <hostname>:<port>, the same after a restart on the same port.
        key = {"EVIGATE_LLM_API_KEY": "sk-test"}
        a = servers(mariadb_url, name="a", args=llm, env=key)
        b = servers(mariadb_url, name="b", args=llm, env=key)
        await asyncio.gather(a.start().wait_ready(), b.start().wait_ready())
        async with (
            grpc.aio.insecure_channel(a.address) as ch_a,
            grpc.aio.insecure_channel(b.address) as ch_b,
        ):
            calls = [
                asyncio.create_task(Client(ch_a).chat("payment-service CPU?", session_id="run-a1")),
                asyncio.create_task(Client(ch_a).chat("order-service errors?", session_id="run-a2")),
                asyncio.create_task(Client(ch_b).chat("gateway latency?", session_id="run-b1")),
            ]
            await asyncio.to_thread(fake.wait_for_requests, 3, 20.0)
            a.kill(signal.SIGKILL)
            b.kill(signal.SIGKILL)
            for call in calls:
                with pytest.raises(grpc.aio.AioRpcError):
                    await call
    rows = dict(db_rows(mariadb_url, "SELECT session_id, status FROM diagnosis_session"))
    assert rows == {"run-a1": "RUNNING", "run-a2": "RUNNING", "run-b1": "RUNNING"}
    owners = dict(db_rows(mariadb_url, "SELECT session_id, owner FROM diagnosis_session"))
    host = socket.gethostname()
    owner_a, owner_b = f"{host}:{a.port}", f"{host}:{b.port}"
    assert owners == {"run-a1": owner_a, "run-a2": owner_a, "run-b1": owner_b}

    # Only a restarts (offline now); b's session is not a's to fail.
    await a.start(args=["--agent-backend", "offline"]).wait_ready()
    rows = {
        sid: (status, reason)
        for sid, status, reason in db_rows(
            mariadb_url, "SELECT session_id, status, failure_reason FROM diagnosis_session"
        )
    }
    assert rows == {
        "run-a1": ("FAILED", RESTART_REASON),
        "run-a2": ("FAILED", RESTART_REASON),
        "run-b1": ("RUNNING", None),
    }
    await b.start(args=["--agent-backend", "offline"]).wait_ready()
    query = "SELECT status, failure_reason FROM diagnosis_session WHERE session_id = 'run-b1'"
    assert db_rows(mariadb_url, query) == [("FAILED", RESTART_REASON)]
    # A recovered session's trace is readable and Chat with its id returns the stored failure.
    async with grpc.aio.insecure_channel(b.address) as channel:
        client = Client(channel)
        trace = (await client.trace("run-a1")).trace
        assert trace.session.failure_reason == RESTART_REASON
        again = await client.chat("payment-service CPU?", session_id="run-a1")
        assert again.status == session_pb2.SESSION_STATUS_FAILED
    assert db_rows(mariadb_url, "SELECT COUNT(*) FROM job")[0][0] == 0  # no score for FAILED (§5.5)
