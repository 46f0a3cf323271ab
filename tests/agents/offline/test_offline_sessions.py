"""The offline backend through the pipeline's own stage glue (real Gatekeeper, verdict constraints,
Composer material and answer guard) over the fake ToolBox: docs/design.md §8.8 and narrow questions."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from evigate.rules import guard
from evigate.rules import verdict as verdict_rules
from evigate.server.agents.base import JSON, Skill
from evigate.server.agents.offline import build_offline_backend
from evigate.server.deadline import Deadline
from evigate.server.pipeline import material
from evigate.server.pipeline.parse import parse_executor_output
from tests.agents.offline.demo_catalog import TEST_CATALOG
from tests.agents.offline.fakes import FakeToolBox, gatekeeper_result, make_task

SKILLS = [
    Skill(
        "diagnose-high-cpu",
        "High CPU",
        ("CPU", "使用率", "high cpu", "GC"),
        ("HighCPUUsage",),
        ("query_metrics: check the HighCPUUsage alert", "query_logs: GC logs", "lookup_knowledge: runbook"),
        ("query_metrics", "query_logs", "lookup_knowledge"),
    ),
    Skill(
        "diagnose-mysql-connection-pool",
        "Connection pool exhaustion",
        ("HikariCP", "连接池", "connection pool", "HikariPool"),
        (),
        (
            "query_logs: search pool exhaustion logs",
            "query_metrics: related alerts",
            "lookup_knowledge: runbook",
        ),
        ("query_logs", "query_metrics", "lookup_knowledge"),
    ),
]
OVERSTATEMENTS = (
    "问题不存在",
    "已排除",
    "确认没有",
    "日志层面已排除",
    "does not exist",
    "ruled out",
    "confirmed no",
)


@dataclass
class Session:
    plan: JSON
    rounds: list[JSON]
    structured: JSON
    gate: JSON
    verdict: JSON
    composer: JSON
    findings: list[object]
    tools: FakeToolBox


async def run_session(query: str, language: str = "zh", tools: FakeToolBox | None = None) -> Session:
    backend = build_offline_backend(catalog=TEST_CATALOG)
    toolbox = tools or FakeToolBox()
    deadline = Deadline.none()
    plan = (await backend.planner.plan(query, language, SKILLS, deadline)).data
    retry: JSON | None = None
    rounds: list[JSON] = []
    for round_number in (1, 2):
        executed = await backend.executor.execute(make_task(toolbox, query, language, retry, round_number))
        structured, parse_status = parse_executor_output(executed.raw_text)
        gate = gatekeeper_result(structured, toolbox)
        proposed = (
            await backend.verifier.verify(
                {
                    "original_query": query,
                    "executor_final_answer": executed.raw_text,
                    "executor_structured_output": structured,
                    "executor_output_parse_status": parse_status,
                    "tool_trace_summary": [],
                    "gatekeeper_result": gate,
                    "retry_context": retry,
                },
                deadline,
            )
        ).data
        decision = verdict_rules.constrain(proposed["verdict"], gate["severity"])
        verdict = {**proposed, "verdict": decision.verdict}
        rounds.append(verdict)
        if verdict["verdict"] != "REJECT":
            break
        retry = material.retry_context(round_number, gate, verdict, parse_status)
    composer_input = material.composer_input(query, language, structured, gate, verdict)
    composed = (await backend.composer.compose(composer_input, deadline)).data
    negatives = material.negative_claims(structured["claims"])
    findings: list[object] = [*guard.scan(composed["user_facing_answer"], negatives)]
    findings += guard.scan(composed["answer_summary"], negatives)
    return Session(plan, rounds, structured, gate, verdict, composed, findings, toolbox)


async def test_reference_session_positive_highcpu() -> None:
    session = await run_session("payment-service 现在有 HighCPUUsage 告警吗？")
    assert session.plan["selected_skill"] == "diagnose-high-cpu"
    assert session.gate["severity"] == "none", session.gate["errors"]
    assert session.verdict["verdict"] == "PASS"
    assert len(session.rounds) == 1
    claims = session.structured["claims"]
    assert [c["claim_type"] for c in claims] == ["observation"]
    (binding,) = claims[0]["evidence_bindings"]
    assert binding["raw_path"] == "$.alerts[0]" and "current=92%" in binding["evidence_excerpt"]
    answer = session.composer["user_facing_answer"]
    assert "92%" in answer and "HighCPUUsage" in answer
    assert "order-service" not in answer and "inventory-service" not in answer  # nothing out of scope
    assert session.findings == []


async def test_reference_session_negative_hikaricp() -> None:
    session = await run_session("inventory-service 有没有 HikariCP 连接池耗尽的日志？")
    assert session.plan["selected_skill"] == "diagnose-mysql-connection-pool"
    assert session.verdict["verdict"] == "PASS"
    claims = session.structured["claims"]
    assert [c["claim_type"] for c in claims] == ["negative_observation"]
    assert [b["raw_path"] for b in claims[0]["evidence_bindings"]] == ["$.no_evidence"]
    answer = session.composer["user_facing_answer"]
    assert "当前查询未检索到 inventory-service 的 HikariCP 连接池耗尽日志" in answer
    assert not any(word in answer for word in OVERSTATEMENTS)
    assert session.findings == []
    assert session.tools.calls == [
        (
            "query_logs",
            {"service": "inventory-service", "pattern": "HikariCP|HikariPool|Connection is not available"},
        )
    ]


async def test_reference_session_negative_in_english() -> None:
    session = await run_session("Any HikariCP pool exhaustion logs for inventory-service?", "en")
    assert session.verdict["verdict"] == "PASS"
    answer = session.composer["user_facing_answer"]
    assert "This query found no matching evidence" in answer
    assert not any(word in answer.lower() for word in OVERSTATEMENTS)
    assert session.findings == []


@pytest.mark.parametrize(
    "query,verdict,claim_types",
    [
        ("Is HighCPUUsage firing on payment-service now?", "PASS", ["observation"]),
        ("order-service 现在有 HighErrorRate 告警吗？", "PASS", ["observation"]),  # resolved: every state
        ("order-service 有没有 HikariCP 连接池耗尽的日志？", "PASS", ["observation"]),
        ("order-service 最近30分钟有 HikariPool-1 的错误日志吗？", "PASS", ["observation"]),
        ("user-service 有 OutOfMemoryError 吗？", "PASS", ["observation"]),
        ("Any OutOfMemoryError logs for order-service?", "PASS", ["negative_observation"]),
        ("api-gateway 有超时日志吗？", "PASS", ["observation"]),
        ("现在有哪些告警在触发？", "PASS", ["observation"]),
        (
            "order-service and inventory-service: any HikariCP logs?",
            "PASS",
            ["observation", "negative_observation"],
        ),
        (
            "payment-service 现在有 HighCPUUsage 告警吗？同时看看有没有 ERROR 日志",
            "PASS",
            ["observation", "negative_observation"],
        ),
        ("HikariCP 连接池耗尽怎么处理？", "PASS", ["observation"]),
        (
            "order-service and inventory-service: HikariCP logs, is HighErrorRate or PodRestart firing now?",
            "PASS",
            ["observation", "negative_observation"],  # six calls capped at two claims
        ),
        ("What is the weather today?", "REJECT", []),
    ],
)
async def test_narrow_sessions(query: str, verdict: str, claim_types: list[str]) -> None:
    session = await run_session(query, "en" if query.isascii() else "zh")
    assert session.verdict["verdict"] == verdict, session.verdict["rationale"]
    assert [c["claim_type"] for c in session.structured["claims"]] == claim_types
    assert session.findings == []
    if verdict == "PASS":
        assert session.verdict["groundedness_score"] == 1.0


async def test_failed_tool_session_reports_missing_info_without_negative_claims() -> None:
    session = await run_session(
        "inventory-service 有没有 HikariCP 连接池耗尽的日志？", tools=FakeToolBox({"query_logs"})
    )
    assert session.verdict["verdict"] == "REJECT"
    assert len(session.rounds) == 2  # one retry round, which repeats the same exact call
    assert {tuple(sorted(args.items())) for _, args in session.tools.calls} == {
        (("pattern", "HikariCP|HikariPool|Connection is not available"), ("service", "inventory-service"))
    }
    assert session.structured["claims"] == []
    answer = session.composer["user_facing_answer"]
    assert "未检索到" not in answer  # a failure is never phrased as "nothing found"
    # what could not be checked, in words: never the raw call
    assert "未能检查 inventory-service 的日志" in answer and "无法给出可靠结论" in answer
    assert "query_logs(" not in answer and "pattern=" not in answer
