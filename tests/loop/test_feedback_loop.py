"""The loop, end to end through a server process: feedback exactly as docs/design.md §7, and a case made
from useful feedback found by lookup_knowledge (L0 and L1) in a later session about the same
problem, whose evidence score shows it.

The data directory is the demo world plus one log line about a problem no runbook covers
(OrderLockTimeoutException), so before the feedback nothing in the knowledge base matches it.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from evigate.storage import Database
from evigate.v1 import feedback_service_pb2, session_pb2, tool_pb2
from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import Client, db_rows, wait_for

DEMO = Path(__file__).resolve().parents[2] / "server" / "demo"
LOG_LINE = "OrderLockTimeoutException: lock wait timeout on order O88120 after 5000ms"
ASK_WITH_LOGS = "order-service 的 OrderLockTimeoutException 日志怎么处理？"
ASK_BY_KEY = "OrderLockTimeoutException 怎么处理？"  # guidance only: lookup_knowledge alone
ASK_IN_WORDS = "How should I handle the order lock wait problem?"  # no key term: BM25 (L1)
RECORDED = "反馈已记录"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    target = tmp_path / "world"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    line = {
        "timestamp": "2026-07-08T23:10:00Z",
        "level": "ERROR",
        "service": "order-service",
        "message": LOG_LINE,
        "logger": "com.shop.order.lock.OrderLock",
        "thread": "http-nio-8080-exec-4",
    }
    with (target / "logs" / "order-service.ndjson").open("a", encoding="utf-8") as logs:
        logs.write(json.dumps(line) + "\n")
    return target


async def _scored(client: Client, url: str, query: str) -> tuple[str, list[str], tool_pb2.ToolInvocation]:
    """Chat, wait for the worker's score, return (session_id, factor names, knowledge invocation)."""
    reply = await client.chat(query)
    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason
    sid = reply.session_id

    def scored() -> bool:
        rows = db_rows(url, "SELECT status FROM job WHERE session_id = %s", (sid,))
        return rows == [("done",)]

    await wait_for(scored, 20, f"evidence score of {sid}")
    trace = (await client.trace(sid)).trace
    [knowledge] = [i for i in trace.tool_invocations if i.tool_name == "lookup_knowledge"]
    return sid, [f.name for f in trace.evidence_score.factors], knowledge


async def test_a_useful_answer_becomes_a_case_that_later_sessions_find(
    servers: ServerFactory, any_url: str, data_dir: Path
) -> None:
    server = servers(any_url, args=["--data-dir", str(data_dir)])
    await server.start().wait_ready()
    async with grpc.aio.insecure_channel(server.address) as channel:
        client = Client(channel)
        # Before: nothing in the knowledge base knows this problem.
        before, factors, knowledge = await _scored(client, any_url, ASK_BY_KEY)
        assert knowledge.retrieval_details.match_level == _level("none")
        assert "retrieval_no_hit" in factors and "l0_exact_match" not in factors

        # A session that found the log line; the operator marks its answer useful.
        reply = await client.chat(ASK_WITH_LOGS)
        assert reply.status == session_pb2.SESSION_STATUS_SUCCESS
        assert LOG_LINE in reply.answer
        first = await client.feedback(reply.session_id, useful=True)
        assert (first.success, first.message) == (True, RECORDED)
        assert str(uuid.UUID(first.case_id)) == first.case_id
        again = await client.feedback(reply.session_id, useful=True)
        assert again.case_id == first.case_id  # never a second case
        not_useful = await client.feedback(before, useful=False)
        assert (not_useful.success, not_useful.message, not_useful.case_id) == (True, RECORDED, "")

        # After: the same problem asked by its key finds the case (L0) and the score shows it.
        after, factors, knowledge = await _scored(client, any_url, ASK_BY_KEY)
        details = knowledge.retrieval_details
        assert details.match_level == _level("L0")
        assert details.evidence_refs and LOG_LINE in details.evidence_refs[0].text  # the answer's text
        assert f"case_id={first.case_id}" in details.evidence_refs[0].text
        blocks = json_format.MessageToDict(knowledge.raw_result)["evidence_blocks"]
        assert blocks[0]["source"] == f"case:{first.case_id}"
        assert "l0_exact_match" in factors and "retrieval_no_hit" not in factors
        # Asked in other words, it is found by BM25 (L1).
        _, factors_l1, knowledge_l1 = await _scored(client, any_url, ASK_IN_WORDS)
        assert knowledge_l1.retrieval_details.match_level == _level("L1")
        assert "l1_semantic_match" in factors_l1

        scores = {
            sid: (await client.trace(sid)).trace.evidence_score.evidence_score for sid in (before, after)
        }
        assert scores[after] > scores[before]
        trace = (await client.trace(reply.session_id)).trace
        assert trace.feedback == session_pb2.FEEDBACK_USEFUL and trace.case_id == first.case_id

    # The case row, exactly as docs/design.md §7 describes it.
    cases = db_rows(
        any_url,
        "SELECT case_id, diagnosis_id, source_type, fault_category, title, root_cause, solution,"
        " created_by FROM case_library",
    )
    # Structured from the verified excerpt (§7): "… OrderLockTimeoutException: lock wait timeout …".
    assert db_rows(any_url, "SELECT error_code FROM case_library") == [("OrderLockTimeoutException",)]
    assert cases == [
        (
            first.case_id,
            reply.session_id,
            "AUTO",
            "timeout",
            ASK_WITH_LOGS[:100],
            reply.answer,
            reply.answer,
            "system",
        )
    ]
    sessions = dict(db_rows(any_url, "SELECT session_id, feedback FROM diagnosis_session"))
    assert sessions[reply.session_id] == "useful" and sessions[before] == "not_useful"
    statuses = {row[0] for row in db_rows(any_url, "SELECT status FROM diagnosis_session")}
    assert statuses == {"SUCCESS"}  # feedback never changes status


def _level(word: str) -> int:
    return int(tool_pb2.MatchLevel.Value({"none": "MATCH_LEVEL_NONE"}.get(word, f"MATCH_LEVEL_{word}")))


async def test_feedback_errors_and_titles_as_design_section_6(
    servers: ServerFactory, sqlite_url: str
) -> None:
    database = await Database.open(sqlite_url)
    try:  # a session that failed has no answer to make a case from
        await database.repo.create_session("failed-one", "payment-service?", "en", "elsewhere")
        await database.repo.finish_failed("failed-one", "planner failed: boom", {})
    finally:
        await database.close()
    server = servers(sqlite_url)
    await server.start().wait_ready()
    long_query = (
        "payment-service 现在有 HighCPUUsage 告警吗？" + "请结合最近的指标详细说明原因和影响范围，" * 8
    )
    async with grpc.aio.insecure_channel(server.address) as channel:
        client = Client(channel)
        reply = await client.chat(long_query)
        assert reply.status == session_pb2.SESSION_STATUS_SUCCESS
        case_id = (await client.feedback(reply.session_id, useful=True)).case_id
        for sid, value, code in (
            ("no-such-session", session_pb2.FEEDBACK_USEFUL, grpc.StatusCode.NOT_FOUND),
            ("failed-one", session_pb2.FEEDBACK_USEFUL, grpc.StatusCode.FAILED_PRECONDITION),
            (reply.session_id, session_pb2.FEEDBACK_UNSPECIFIED, grpc.StatusCode.INVALID_ARGUMENT),
            (reply.session_id, 7, grpc.StatusCode.INVALID_ARGUMENT),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await client.feedback_stub.SubmitFeedback(
                    feedback_service_pb2.SubmitFeedbackRequest(session_id=sid, feedback=value),  # type: ignore[arg-type]
                    timeout=10,
                )
            assert raised.value.code() == code, (sid, value, raised.value)
        # not_useful on a failed session is fine: it is how bad cases are marked.
        assert (await client.feedback("failed-one", useful=False)).case_id == ""
    [(title,)] = db_rows(sqlite_url, "SELECT title FROM case_library WHERE case_id = %s", (case_id,))
    assert title == long_query[:100] and len(title) == 100
    rows = dict(db_rows(sqlite_url, "SELECT session_id, status FROM diagnosis_session"))
    assert rows["failed-one"] == "FAILED"
