"""OfflineExecutor: exact calls from the question, exact bindings, no widening, failures as missing_info."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from evigate.server.agents.base import JSON
from evigate.server.agents.offline.calls import STEPS_QUERY
from evigate.server.agents.offline.executor import OfflineExecutor
from evigate.server.agents.offline.facts import critical_facts, fact_supported
from evigate.server.pipeline.parse import parse_executor_output
from tests.agents.offline.demo_catalog import TEST_CATALOG
from tests.agents.offline.fakes import FakeToolBox, make_task

HIKARI = "HikariCP|HikariPool|Connection is not available"


async def run(query: str, language: str = "zh", tools: FakeToolBox | None = None) -> tuple[JSON, FakeToolBox]:
    toolbox = tools or FakeToolBox()
    output = await OfflineExecutor(catalog=TEST_CATALOG).execute(make_task(toolbox, query, language))
    data, status = parse_executor_output(output.raw_text)
    assert status["status"] == "valid", status
    assert [r.invocation_id for r in output.tool_calls] == [r.invocation_id for r in toolbox.results]
    return data, toolbox


def paths(data: JSON) -> list[list[str]]:
    return [[b["raw_path"] for b in claim["evidence_bindings"]] for claim in data["claims"]]


def types(data: JSON) -> list[str]:
    return [claim["claim_type"] for claim in data["claims"]]


# --- docs/design.md §8.8 reference sessions --------------------------------------------------------


async def test_reference_positive_highcpu_on_payment_service() -> None:
    data, tools = await run("payment-service 现在有 HighCPUUsage 告警吗？")
    assert tools.calls == [("query_metrics", {"service": "payment-service", "alert_name": "HighCPUUsage"})]
    assert types(data) == ["observation"]
    (claim,) = data["claims"]
    (binding,) = claim["evidence_bindings"]
    assert binding["tool_name"] == "query_metrics"
    assert binding["source_invocation_id"] == tools.results[0].invocation_id
    assert binding["raw_path"] == "$.alerts[0]"
    assert "current=92%" in binding["evidence_excerpt"]
    assert binding["evidence_excerpt"] == tools.results[0].retrieval_details["evidence_refs"][0]["text"]
    assert (
        claim["claim_text"] == "payment-service 的 HighCPUUsage 告警正在触发"
        "（state=firing, severity=critical, current=92%, duration=25m）。"
    )
    assert claim["support_level"] == "direct"
    assert data["missing_info"] == [] and data["hypotheses"] == []


async def test_reference_negative_hikaricp_on_inventory_service() -> None:
    data, tools = await run("inventory-service 有没有 HikariCP 连接池耗尽的日志？")
    assert tools.calls == [("query_logs", {"service": "inventory-service", "pattern": HIKARI})]
    assert types(data) == ["negative_observation"]
    (claim,) = data["claims"]
    (binding,) = claim["evidence_bindings"]
    assert binding["raw_path"] == "$.no_evidence"
    assert binding["source_invocation_id"] == tools.results[0].invocation_id
    assert binding["evidence_excerpt"].startswith(
        "query_logs returned no evidence; evidence_status=no_evidence"
    )
    assert claim["claim_text"] == "当前查询未检索到 inventory-service 的 HikariCP 连接池耗尽日志。"


async def test_english_claim_texts() -> None:
    positive, _ = await run("Is there a HighCPUUsage alert firing on payment-service right now?", "en")
    negative, _ = await run("Any HikariCP pool exhaustion logs for inventory-service?", "en")
    assert positive["claims"][0]["claim_text"] == (
        "For payment-service, the HighCPUUsage alert is firing "
        "(state=firing, severity=critical, current=92%, duration=25m)."
    )
    assert negative["claims"][0]["claim_text"] == (
        "This query found no matching evidence of HikariCP connection pool exhaustion logs"
        " for inventory-service."
    )


# --- never widen --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "inventory-service 有没有 HikariCP 连接池耗尽的日志？",
        "inventory-service 有没有 HikariPool-1 的日志？",
        "payment-service 现在有 HighErrorRate 告警吗？",
        "Any OutOfMemoryError logs for order-service?",
    ],
)
async def test_no_widening_after_no_evidence(query: str) -> None:
    data, tools = await run(query, "en" if query.isascii() else "zh")
    # No second, broader query: these ask about now or name a log term (only time ever widens:
    # test_offline_widening.py).
    assert len(tools.calls) == 1, tools.calls
    _, arguments = tools.calls[0]
    assert "service" in arguments  # the service name was not dropped
    assert types(data) == ["negative_observation"]
    assert paths(data) == [["$.no_evidence"]]


async def test_retry_round_reuses_recorded_results_without_new_queries() -> None:
    tools = FakeToolBox()
    executor = OfflineExecutor(catalog=TEST_CATALOG)
    query = "inventory-service 有没有 HikariCP 连接池耗尽的日志？"
    first = await executor.execute(make_task(tools, query))
    retry = {"previous_round": 1, "failed_rules": ["evidence.excerpt"], "errors": [], "rationale": "x"}
    second = await executor.execute(make_task(tools, query, retry=retry, round_=2))
    assert len(tools.calls) == 1
    assert json.loads(second.raw_text) == json.loads(first.raw_text)


# --- failures -------------------------------------------------------------------------------------------


async def test_failed_tool_gives_missing_info_never_a_negative_observation() -> None:
    data, tools = await run(
        "inventory-service 有没有 HikariCP 连接池耗尽的日志？", tools=FakeToolBox({"query_logs"})
    )
    assert len(tools.calls) == 1
    assert data["claims"] == []
    assert len(data["missing_info"]) == 1
    item = data["missing_info"][0]  # what could not be checked, in words, never the call
    assert item.startswith("未能检查 inventory-service 的日志") and "query_logs(" not in item
    assert all("重试" in action["action_text"] for action in data["recommended_actions"])


async def test_one_failed_tool_keeps_the_other_claim() -> None:
    data, tools = await run(
        "payment-service 现在有 HighCPUUsage 告警吗？同时看看有没有 ERROR 日志",
        tools=FakeToolBox({"query_logs"}),
    )
    assert [name for name, _ in tools.calls] == ["query_metrics", "query_logs"]
    assert types(data) == ["observation"]
    assert len(data["missing_info"]) == 1


async def test_retry_round_reruns_a_failed_call_with_the_same_arguments() -> None:
    tools = FakeToolBox({"query_logs"})
    executor = OfflineExecutor(catalog=TEST_CATALOG)
    query = "inventory-service 有没有 HikariCP 连接池耗尽的日志？"
    await executor.execute(make_task(tools, query))
    tools.fail_tools.clear()
    second = json.loads((await executor.execute(make_task(tools, query, retry={}, round_=2))).raw_text)
    assert tools.calls[0] == tools.calls[1]
    assert types(second) == ["negative_observation"]


async def test_question_without_entities_calls_nothing() -> None:
    data, tools = await run("What is the weather today?", "en")
    assert tools.calls == []
    assert data["claims"] == [] and len(data["missing_info"]) == 1


# --- the question table ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    question: str
    calls: list[tuple[str, dict[str, Any]]]
    claim_types: list[str]
    cited: list[list[str]]


M, L, K = "query_metrics", "query_logs", "lookup_knowledge"
ROWS = [
    Row(
        "payment-service 现在有 HighCPUUsage 告警吗？",
        [(M, {"service": "payment-service", "alert_name": "HighCPUUsage"})],
        ["observation"],
        [["$.alerts[0]"]],
    ),
    Row(
        "Is HighCPUUsage firing on payment-service now?",
        [(M, {"service": "payment-service", "alert_name": "HighCPUUsage"})],
        ["observation"],
        [["$.alerts[0]"]],
    ),
    Row(
        "支付服务 CPU 使用率告警",
        [(M, {"service": "payment-service", "alert_name": "HighCPUUsage"})],
        ["observation"],
        [["$.alerts[0]"]],
    ),
    Row(
        "order-service 现在有 HighErrorRate 告警吗？",
        [(M, {"service": "order-service", "alert_name": "HighErrorRate"})],
        ["observation"],
        [["$.alerts[0]"]],
    ),
    Row(
        "Did order-service have a HighErrorRate alert?",
        [(M, {"service": "order-service", "alert_name": "HighErrorRate"})],
        ["observation"],
        [["$.alerts[0]"]],
    ),
    Row(
        "inventory-service 有 PodRestart 告警吗",
        [(M, {"service": "inventory-service", "alert_name": "PodRestart"})],
        ["observation"],
        [["$.alerts[0]"]],
    ),
    Row(
        "Is PodRestart firing on payment-service right now?",
        [(M, {"service": "payment-service", "alert_name": "PodRestart"})],
        ["negative_observation"],
        [["$.no_evidence"]],
    ),
    Row(
        "现在有哪些告警在触发？",
        [(M, {"state": "firing"})],
        ["observation"],
        [["$.alerts[0]", "$.alerts[1]"]],
    ),
    Row(
        "inventory-service 有没有 HikariCP 连接池耗尽的日志？",
        [(L, {"service": "inventory-service", "pattern": HIKARI})],
        ["negative_observation"],
        [["$.no_evidence"]],
    ),
    Row(
        "order-service 有没有 HikariCP 连接池耗尽的日志？",
        [(L, {"service": "order-service", "pattern": HIKARI})],
        ["observation"],
        [["$.logs[0]", "$.logs[1]"]],
    ),
    Row(
        "Any connection pool exhaustion on order-service in the last hour?",
        [(L, {"service": "order-service", "pattern": HIKARI, "since": "1h"})],
        ["observation"],
        [["$.logs[0]", "$.logs[1]"]],
    ),
    Row(
        "order-service 最近30分钟有 HikariPool-1 的错误日志吗？",
        [(L, {"service": "order-service", "level": "ERROR", "keyword": "HikariPool-1", "since": "30m"})],
        ["observation"],
        [["$.logs[0]", "$.logs[1]"]],
    ),
    Row(
        "order-service 最近10分钟有 HikariPool-1 的日志吗？",
        [(L, {"service": "order-service", "keyword": "HikariPool-1", "since": "10m"})],
        ["negative_observation"],
        [["$.no_evidence"]],
    ),
    Row(
        "user-service 有 OutOfMemoryError 吗？",
        [(L, {"service": "user-service", "keyword": "OutOfMemoryError"})],
        ["observation"],
        [["$.logs[0]"]],
    ),
    Row(
        "Any OutOfMemoryError logs for order-service?",
        [(L, {"service": "order-service", "keyword": "OutOfMemoryError"})],
        ["negative_observation"],
        [["$.no_evidence"]],
    ),
    Row(
        "api-gateway 有超时日志吗？",
        [(L, {"service": "api-gateway", "pattern": "(?i)timeout|timed out|超时"})],
        ["observation"],
        [["$.logs[0]"]],
    ),
    Row(
        "payment-service WARN logs in the last 45 minutes",
        [(L, {"service": "payment-service", "level": "WARN", "since": "45m"})],
        ["observation"],
        [["$.logs[0]"]],
    ),
    Row(
        "payment-service 有没有 ERROR 日志？",
        [(L, {"service": "payment-service", "level": "ERROR"})],
        ["negative_observation"],
        [["$.no_evidence"]],
    ),
    Row(
        "order-service and inventory-service: any HikariCP logs?",
        [
            (L, {"service": "order-service", "pattern": HIKARI}),
            (L, {"service": "inventory-service", "pattern": HIKARI}),
        ],
        ["observation", "negative_observation"],
        [["$.logs[0]", "$.logs[1]"], ["$.no_evidence"]],
    ),
    Row(
        "payment-service 现在有 HighCPUUsage 告警吗？同时看看有没有 ERROR 日志",
        [
            (M, {"service": "payment-service", "alert_name": "HighCPUUsage"}),
            (L, {"service": "payment-service", "level": "ERROR"}),
        ],
        ["observation", "negative_observation"],
        [["$.alerts[0]"], ["$.no_evidence"]],
    ),
    Row(
        "HikariCP 连接池耗尽怎么处理？",
        [(K, {"query": f"HikariCP {STEPS_QUERY}"})],
        ["observation"],
        [["$.evidence_blocks[0]"]],
    ),
    Row(
        "How should I handle a HighCPUUsage alert?",
        [(K, {"query": f"HighCPUUsage {STEPS_QUERY}"})],
        ["observation"],
        [["$.evidence_blocks[0]"]],
    ),
    Row(
        "payment-service 现在有 HighCPUUsage 告警，怎么处理？",
        [
            (M, {"service": "payment-service", "alert_name": "HighCPUUsage"}),
            (K, {"query": f"HighCPUUsage {STEPS_QUERY}"}),
        ],
        ["observation", "observation"],
        [["$.alerts[0]"], ["$.evidence_blocks[0]"]],
    ),
    Row(
        "How do I fix deadlocks?",
        [(K, {"query": f"deadlock {STEPS_QUERY}"})],
        ["negative_observation"],
        [["$.no_evidence"]],
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.question for r in ROWS])
async def test_question_table(row: Row) -> None:
    language = "en" if row.question.isascii() else "zh"
    data, tools = await run(row.question, language)
    assert tools.calls == row.calls
    assert types(data) == row.claim_types
    assert paths(data) == row.cited
    assert len(data["claims"]) <= 2
    for claim in data["claims"]:
        refs = {
            (r.invocation_id, ref["raw_path"]): ref["text"]
            for r in tools.results
            for ref in r.retrieval_details["evidence_refs"]
        }
        excerpts = []
        seen: set[tuple[int, str]] = set()
        for binding in claim["evidence_bindings"]:
            key = (binding["source_invocation_id"], binding["raw_path"])
            assert key not in seen  # each array item bound once
            seen.add(key)
            assert refs[key] == binding["evidence_excerpt"]  # verbatim
            excerpts.append(binding["evidence_excerpt"])
        negative = claim["claim_type"] == "negative_observation"
        for fact in critical_facts(claim["claim_text"]):
            assert fact_supported(fact, excerpts, negative_claim=negative), (claim["claim_text"], fact)


def test_table_has_twenty_questions_in_both_languages() -> None:
    chinese = [r for r in ROWS if not r.question.isascii()]
    assert len(ROWS) >= 20 and len(chinese) >= 8 and len(ROWS) - len(chinese) >= 8


async def test_more_than_two_results_are_capped_at_two_claims_keeping_every_binding() -> None:
    data, tools = await run(
        "order-service and inventory-service: HikariCP logs, and is HighErrorRate or PodRestart firing now?",
        "en",
    )
    assert len(tools.calls) == 6  # 2 services x 2 alerts + 2 log queries
    assert len(data["claims"]) == 2
    assert sorted(types(data)) == ["negative_observation", "observation"]
    cited = [
        (b["source_invocation_id"], b["raw_path"])
        for claim in data["claims"]
        for b in claim["evidence_bindings"]
    ]
    assert len(cited) == len(set(cited))
    assert {invocation_id for invocation_id, _ in cited} == {r.invocation_id for r in tools.results}
