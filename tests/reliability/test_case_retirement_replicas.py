"""Feedback NOT_USEFUL after USEFUL retires the case across served replicas (issue 19, item 14).

Two server processes on one database (a SQLite file, then MariaDB): USEFUL on replica A makes a case
that a Chat on replica B retrieves through its served lookup_knowledge (the hybrid search, the
case's vector made by B); NOT_USEFUL on B retires it, and a Chat on A no longer retrieves it, while
the row stays in case_library, marked retired, for audit."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict

from evigate.v1 import session_pb2, trace_service_pb2
from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import Client, db_rows

ANSWERED = "payment-service 现在有 HighCPUUsage 告警吗？"  # the useful answer: the case
RUNBOOK = "HighCPUUsage 告警一般怎么排查？"  # calls lookup_knowledge, which searches the case library
SUCCESS = session_pb2.SESSION_STATUS_SUCCESS


async def _knowledge(client: Client) -> dict[str, Any]:
    """The retrieval of the lookup_knowledge call of a fresh RUNBOOK Chat: sources and details."""
    reply = await client.chat(RUNBOOK)
    assert reply.status == SUCCESS, reply.failure_reason
    trace = (await client.trace(reply.session_id)).trace
    (call,) = [inv for inv in trace.tool_invocations if inv.tool_name == "lookup_knowledge"]
    blocks = MessageToDict(call.raw_result).get("evidence_blocks", [])
    retrieval = MessageToDict(call.retrieval_details.retrieval)
    return {"sources": [block["source"] for block in blocks], **retrieval}


async def test_not_useful_on_one_replica_retires_the_case_another_replica_retrieved(
    servers: ServerFactory, any_url: str
) -> None:
    a = servers(any_url, name="a", args=["--instance-name", "replica-a"])
    b = servers(any_url, name="b", args=["--instance-name", "replica-b"])
    await asyncio.gather(a.start().wait_ready(), b.start().wait_ready())
    async with (
        grpc.aio.insecure_channel(a.address) as ch_a,
        grpc.aio.insecure_channel(b.address) as ch_b,
    ):
        on_a, on_b = Client(ch_a), Client(ch_b)
        before = await _knowledge(on_a)  # A's lookup before any case: the demo runbooks only
        assert not any(source.startswith("case:") for source in before["sources"])

        answered = await on_a.chat(ANSWERED)
        assert answered.status == SUCCESS, answered.failure_reason
        made = await on_a.feedback(answered.session_id, useful=True)
        assert made.case_id
        case = f"case:{made.case_id}"

        found = await _knowledge(on_b)
        assert case in found["sources"], found
        assert found["method"] == "hybrid" and found.get("degraded") is None
        (hit,) = [score for score in found["scores"] if score["source"] == case]
        assert hit["dense"] is not None  # ranked by its vector too, not by BM25 alone

        retired = await on_b.feedback(answered.session_id, useful=False)
        assert retired.success and retired.case_id == ""

        # A's next lookup reads the case library afresh: the case is gone from it at once.
        after = await _knowledge(on_a)
        assert case not in after["sources"], after
        assert after["method"] == "hybrid"
        assert set(after["sources"]) == set(before["sources"])  # the runbooks are still found
        active = await on_a.trace_stub.ListCases(trace_service_pb2.ListCasesRequest(), timeout=30)
        assert list(active.cases) == []
        audit = trace_service_pb2.ListCasesRequest(include_retired=True)
        listed = await on_a.trace_stub.ListCases(audit, timeout=30)
        assert [(c.case_id, c.retired) for c in listed.cases] == [(made.case_id, True)]

    # Kept for audit: the row is there, retired, with the session it came from.
    rows = db_rows(any_url, "SELECT case_id, diagnosis_id, retired_at IS NOT NULL FROM case_library")
    assert rows == [(made.case_id, answered.session_id, 1)]
    feedback = db_rows(
        any_url, "SELECT feedback FROM diagnosis_session WHERE session_id = %s", (answered.session_id,)
    )
    assert feedback == [("not_useful",)]
