"""The offline backend over the bundled demo world through the real SessionToolBox and Gatekeeper:
the docs/design.md §8.8 reference sessions as the service runs them (no database: an in-memory recorder)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from evigate.rules import guard
from evigate.rules.types import InvocationFacts
from evigate.server.agents.base import JSON, ExecutorTask
from evigate.server.agents.offline import build_offline_backend
from evigate.server.deadline import Deadline
from evigate.server.pipeline import material
from evigate.server.pipeline.parse import parse_executor_output
from evigate.server.skills import load_skills
from evigate.server.tools import SessionToolBox, build_backend
from evigate.storage.records import CaseRecord
from tests.agents.offline.demo_catalog import TEST_CATALOG
from tests.support import tool_table


class NoCases:
    async def list_cases(self, limit: int = 1000) -> list[CaseRecord]:
        return []


class MemoryRecorder:
    def __init__(self) -> None:
        self.rows: list[tuple[int, str, JSON, JSON]] = []

    async def record_invocation(  # noqa: PLR0917 - the storage signature
        self,
        session_id: str,
        tool_name: str,
        arguments: dict[str, Any],
        status: str,
        error: str | None,
        raw_result: dict[str, Any] | None,
        retrieval_details: dict[str, Any],
        latency_ms: float,
        *,
        created_at: datetime | None = None,
    ) -> int:
        invocation_id = 500 + len(self.rows) + 1
        self.rows.append((invocation_id, tool_name, arguments, retrieval_details))
        return invocation_id


async def session(query: str, language: str) -> tuple[JSON, JSON, JSON, MemoryRecorder]:
    agents = build_offline_backend(catalog=TEST_CATALOG)
    recorder = MemoryRecorder()
    tools = SessionToolBox(build_backend(None, NoCases()), recorder, "demo")
    deadline = Deadline.none()
    plan = (await agents.planner.plan(query, language, load_skills(), deadline)).data
    executed = await agents.executor.execute(ExecutorTask(query, language, plan, 1, None, tools, deadline))
    structured, parse_status = parse_executor_output(executed.raw_text)
    invocations = [InvocationFacts.from_seed(i, name, details) for i, name, _, details in recorder.rows]
    gate = tool_table.check(structured, invocations).to_seed()
    verifier_input: JSON = {
        "original_query": query,
        "executor_final_answer": executed.raw_text,
        "executor_structured_output": structured,
        "executor_output_parse_status": parse_status,
        "tool_trace_summary": [],
        "gatekeeper_result": gate,
        "retry_context": None,
    }
    verdict = (await agents.verifier.verify(verifier_input, deadline)).data
    composed = (
        await agents.composer.compose(
            material.composer_input(query, language, structured, gate, verdict), deadline
        )
    ).data
    assert gate["severity"] == "none", gate["errors"]
    assert guard.scan(composed["user_facing_answer"], material.negative_claims(structured["claims"])) == []
    return structured, verdict, composed, recorder


async def test_demo_world_positive_highcpu() -> None:
    structured, verdict, composed, recorder = await session(
        "payment-service 现在有 HighCPUUsage 告警吗？", "zh"
    )
    assert verdict["verdict"] == "PASS"
    assert [(name, args) for _, name, args, _ in recorder.rows] == [
        ("query_metrics", {"service": "payment-service", "alert_name": "HighCPUUsage"})
    ]
    (claim,) = structured["claims"]
    assert claim["claim_type"] == "observation"
    (binding,) = claim["evidence_bindings"]
    assert binding["raw_path"] == "$.alerts[0]" and "current=92%" in binding["evidence_excerpt"]
    assert "92%" in composed["user_facing_answer"]


async def test_demo_world_negative_hikaricp() -> None:
    structured, verdict, composed, recorder = await session(
        "inventory-service 有没有 HikariCP 连接池耗尽的日志？", "zh"
    )
    assert verdict["verdict"] == "PASS"
    assert len(recorder.rows) == 1
    (claim,) = structured["claims"]
    assert claim["claim_type"] == "negative_observation"
    assert [b["raw_path"] for b in claim["evidence_bindings"]] == ["$.no_evidence"]
    assert "当前查询未检索到 inventory-service 的 HikariCP 连接池耗尽日志" in composed["user_facing_answer"]


async def test_demo_world_order_service_pool_exhaustion_logs() -> None:
    structured, verdict, _, _ = await session("Any HikariCP pool exhaustion logs for order-service?", "en")
    assert verdict["verdict"] == "PASS"
    (claim,) = structured["claims"]
    assert claim["claim_type"] == "observation"
    assert "HikariPool-1 - Connection is not available" in claim["evidence_bindings"][0]["evidence_excerpt"]
