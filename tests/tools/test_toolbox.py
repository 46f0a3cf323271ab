from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from evigate.server.deadline import Deadline
from evigate.server.tools import (
    KnowledgeHits,
    KnowledgeQuery,
    LogsQuery,
    MetricsQuery,
    Page,
    PatternsQuery,
    SessionToolBox,
    ToolError,
)
from evigate.server.tools.calls import ToolCallResult
from tests.tools.conftest import Harness, MemoryRecorder, make_harness


async def test_identical_call_is_deduped_to_the_earlier_invocation(demo: Harness) -> None:
    first = await demo.call("query_logs", service="order-service", keyword="HikariCP", limit=3)
    # Same normalized arguments: key order and surrounding spaces do not matter.
    second = await demo.toolbox.call(
        "query_logs", {"limit": 3, "keyword": " HikariCP ", "service": "order-service"}, Deadline.none()
    )
    assert second.invocation_id != first.invocation_id
    assert second.status == "success"
    details = second.retrieval_details
    assert details["evidence_status"] == "deduped"
    assert details["deduped_from"] == first.invocation_id
    assert details["evidence_refs"] == first.retrieval_details["evidence_refs"]
    assert details["match_level"] == first.retrieval_details["match_level"] == "L0"
    assert second.raw_result == first.raw_result
    rows = demo.recorder.rows
    assert len(rows) == 2 and rows[1]["retrieval_details"]["deduped_from"] == 1
    # A third repeat still points at the original, never at a deduped row.
    third = await demo.call("query_logs", service="order-service", keyword="HikariCP", limit=3)
    assert third.retrieval_details["deduped_from"] == first.invocation_id


async def test_no_evidence_calls_are_deduped_too(demo: Harness) -> None:
    first = await demo.call("query_logs", service="inventory-service", keyword="HikariCP")
    second = await demo.call("query_logs", service="inventory-service", keyword="HikariCP")
    assert second.retrieval_details["evidence_status"] == "deduped"
    assert second.retrieval_details["evidence_refs"] == first.retrieval_details["evidence_refs"]
    assert second.retrieval_details["evidence_refs"][0]["raw_path"] == "$.no_evidence"


async def test_different_arguments_are_not_deduped(demo: Harness) -> None:
    await demo.call("query_logs", service="order-service", keyword="HikariCP")
    other = await demo.call("query_logs", service="order-service", keyword="HikariCP", limit=5)
    assert other.retrieval_details["evidence_status"] == "supported"


class FlakyBackend:
    """Fails the first logs query, then answers; counts calls."""

    def __init__(self) -> None:
        self.calls = 0

    def now(self) -> datetime:
        return datetime(2026, 7, 8, 23, 30, tzinfo=UTC)

    async def query_metrics(self, query: MetricsQuery) -> Page:
        await asyncio.sleep(1)
        return Page([], 0)

    async def query_logs(self, query: LogsQuery) -> Page:
        self.calls += 1
        if self.calls == 1:
            raise ToolError("log data unavailable: disk detached")
        if self.calls == 2:
            raise RuntimeError("bug")
        return Page([{"timestamp": "t", "level": "INFO", "service": "s", "message": "m"}], 1)

    async def summarize_logs(self, query: PatternsQuery) -> Page:
        return Page([], 0)

    async def lookup_knowledge(self, query: KnowledgeQuery) -> KnowledgeHits:
        return KnowledgeHits([], "none")


async def test_failed_calls_are_recorded_and_never_deduped() -> None:
    backend = FlakyBackend()
    recorder = MemoryRecorder()
    toolbox = SessionToolBox(backend, recorder, "s")
    first = await toolbox.call("query_logs", {"service": "s"}, Deadline.none())
    second = await toolbox.call("query_logs", {"service": "s"}, Deadline.none())
    third = await toolbox.call("query_logs", {"service": "s"}, Deadline.none())
    assert (first.status, first.error) == ("failed", "log data unavailable: disk detached")
    assert second.status == "failed" and second.error == "tool backend error: RuntimeError: bug"
    for failed in (first, second):
        assert failed.retrieval_details == {
            "evidence_status": "failed",
            "match_level": "none",
            "evidence_refs": [],
        }
        assert failed.raw_result is None
    assert third.retrieval_details["evidence_status"] == "supported"
    assert backend.calls == 3
    assert [r["status"] for r in recorder.rows] == ["failed", "failed", "success"]


async def test_deadline_fails_the_call() -> None:
    recorder = MemoryRecorder()
    toolbox = SessionToolBox(FlakyBackend(), recorder, "s")
    slow = await toolbox.call("query_metrics", {}, Deadline.after(0.05))
    assert slow.status == "failed" and slow.error == "deadline exceeded during the call"
    expired = await toolbox.call("query_metrics", {"service": "x"}, Deadline.after(0))
    assert expired.status == "failed" and expired.error == "deadline exceeded before the call"
    assert all(r["retrieval_details"]["evidence_refs"] == [] for r in recorder.rows)


async def test_every_call_is_recorded_with_latency_and_reported() -> None:
    seen: list[ToolCallResult] = []

    async def on_call(result: ToolCallResult) -> None:
        seen.append(result)

    h = make_harness()
    toolbox = SessionToolBox(h.backend, h.recorder, "session-7", on_call)
    await toolbox.call("query_metrics", {"service": "payment-service"}, Deadline.none())
    await toolbox.call("lookup_knowledge", {"query": "HighCPUUsage"}, Deadline.none())
    await toolbox.call("query_logs", {"bogus": 1}, Deadline.none())
    assert [r.invocation_id for r in seen] == [1, 2, 3]
    assert [r["tool_name"] for r in h.recorder.rows] == ["query_metrics", "lookup_knowledge", "query_logs"]
    for row in h.recorder.rows:
        assert row["session_id"] == "session-7"
        assert row["latency_ms"] >= 0
    assert h.recorder.rows[0]["arguments"] == {"service": "payment-service"}


async def test_concurrent_identical_calls_hit_the_backend_once(demo: Harness) -> None:
    results = await asyncio.gather(*(demo.call("query_metrics", service="gateway") for _ in range(4)))
    statuses = sorted(r.retrieval_details["evidence_status"] for r in results)
    assert statuses == ["deduped", "deduped", "deduped", "supported"]
