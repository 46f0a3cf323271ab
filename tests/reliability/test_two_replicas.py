"""Two server processes on one MariaDB database under interleaved Chat, Feedback and GetTrace."""

from __future__ import annotations

import asyncio
import collections
import random

import grpc

from evigate.v1 import session_pb2
from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import QUESTIONS, Client, ServerProc, db_rows, wait_for

SESSIONS = 16
SUCCESS = session_pb2.SESSION_STATUS_SUCCESS


def _score_writes(*procs: ServerProc) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for proc in procs:
        for event in proc.log_events():
            if event.get("event") == "evidence score written":
                counts[str(event.get("session_id"))] += 1
    return counts


async def _chat_either(client: Client, query: str, session_id: str) -> str:
    """SUCCESS, or ALREADY_EXISTS while the other replica runs the same session id."""
    try:
        reply = await client.chat(query, session_id=session_id)
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.ALREADY_EXISTS, error
        return "running elsewhere"
    assert reply.status == SUCCESS, reply.failure_reason
    return "answered"


async def _trace_any(client: Client, session_id: str) -> None:
    try:
        reply = await client.trace(session_id)
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.NOT_FOUND, error  # not created yet
        return
    assert reply.trace.session.session_id == session_id


async def test_two_replicas_share_one_database_without_duplicates_or_lost_sessions(
    servers: ServerFactory, mariadb_url: str
) -> None:
    a = servers(mariadb_url, name="a", args=["--instance-name", "replica-a"])
    b = servers(mariadb_url, name="b", args=["--instance-name", "replica-b"])
    await asyncio.gather(a.start().wait_ready(), b.start().wait_ready())
    rng = random.Random(8)
    ids = [f"mix-{n}" for n in range(SESSIONS)]
    useful = {sid for n, sid in enumerate(ids) if n % 3 != 2}
    case_ids: dict[str, set[str]] = collections.defaultdict(set)

    async with (
        grpc.aio.insecure_channel(a.address) as ch_a,
        grpc.aio.insecure_channel(b.address) as ch_b,
    ):
        clients = [Client(ch_a), Client(ch_b)]

        async def one_session(n: int, sid: str) -> list[str]:
            query = QUESTIONS[n % len(QUESTIONS)]
            first, second = clients[n % 2], clients[1 - n % 2]
            # Every other id on both replicas at once: one runs it, never two.
            racing = n % 4 < 2
            outcomes = await asyncio.gather(
                _chat_either(first, query, sid),
                _chat_either(second, query, sid) if racing else _trace_any(second, sid),
                _trace_any(rng.choice(clients), ids[(n + 1) % SESSIONS]),
            )
            assert "answered" in outcomes[:2]  # the replica that created the session ran it
            feedbacks = await asyncio.gather(*(c.feedback(sid, useful=sid in useful) for c in clients))
            await asyncio.gather(clients[0].trace(sid), clients[1].trace(sid))
            for reply in feedbacks:
                assert reply.success and reply.message == "反馈已记录"
                case_ids[sid].add(reply.case_id)
            return [o for o in outcomes[:2] if o]

        results = await asyncio.gather(*(one_session(n, sid) for n, sid in enumerate(ids)))
    answered = sum(r.count("answered") for r in results)
    assert answered >= SESSIONS  # the others saw their session running on the other replica

    # No session lost or stuck: every id exists once, finished.
    sessions = db_rows(mariadb_url, "SELECT session_id, status, feedback FROM diagnosis_session")
    assert sorted(s[0] for s in sessions) == sorted(ids)
    assert {s[1] for s in sessions} == {"SUCCESS"}
    owners = collections.Counter(
        row[0] for row in db_rows(mariadb_url, "SELECT owner FROM diagnosis_session")
    )
    assert set(owners) == {"replica-a", "replica-b"}, owners  # both replicas ran sessions
    assert {s[0]: s[2] for s in sessions} == {sid: "useful" if sid in useful else "not_useful" for sid in ids}
    # No duplicate case: one per useful session, and both replicas returned its id.
    cases = db_rows(mariadb_url, "SELECT diagnosis_id, case_id FROM case_library")
    assert sorted(c[0] for c in cases) == sorted(useful)
    assert {sid: {cid} for sid, cid in cases} == {sid: case_ids[sid] for sid in useful}
    assert all(case_ids[sid] == {""} for sid in ids if sid not in useful)

    # No job run twice: one job per session, claimed once, done; each score written once.
    def drained() -> bool:
        return bool(db_rows(mariadb_url, "SELECT COUNT(*) FROM job WHERE status <> 'done'")[0][0] == 0)

    await wait_for(drained, 30, "both workers drained the queue")
    jobs = db_rows(mariadb_url, "SELECT session_id, status, attempts FROM job")
    assert sorted(jobs) == sorted((sid, "done", 1) for sid in ids)
    assert _score_writes(a, b) == dict.fromkeys(ids, 1)
    scored = "SELECT COUNT(*) FROM diagnosis_session WHERE self_evaluation LIKE '%evidence_score%'"
    assert db_rows(mariadb_url, scored) == [(SESSIONS,)]
    assert await a.health() == await b.health() == 1
