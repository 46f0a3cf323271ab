"""Narrow questions over the bundled demo world, end to end: offline agents, the real fixture tools,
the real storage (SQLite and MariaDB). Table-driven: each row names the claims expected (type, tool,
first cited raw_path, facts the cited excerpt must hold) and the ground truth in the demo files that
justifies the claim type, read independently of the tools (tests/pipeline/demo_data.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evigate.rules import guard
from evigate.server.agents.offline import readable
from evigate.server.deadline import Deadline
from evigate.server.pipeline import material
from evigate.storage import Database
from tests.pipeline import demo_data as demo
from tests.pipeline.conftest import BuildPipeline

JSON = dict[str, Any]
PATH_GRAMMAR = {
    "query_metrics": re.compile(r"^\$\.alerts\[\d+\]$"),
    "query_logs": re.compile(r"^\$\.logs\[\d+\]$"),
    "lookup_knowledge": re.compile(r"^\$\.evidence_blocks\[\d+\]$"),
}
SAFE = ("当前查询未检索到", "this query found no matching evidence")


@dataclass(frozen=True)
class Claim:
    claim_type: str  # observation | negative_observation
    tool: str
    path: str  # the first binding's raw_path
    truth: Callable[[], Sequence[object]]  # the matching demo data: non-empty iff observation
    facts: tuple[str, ...] = ()  # in the first cited excerpt and in the ground truth


@dataclass(frozen=True)
class Case:
    id: str
    query: str
    language: str
    claims: tuple[Claim, ...]
    verdict: str = "PASS"


def _alerts(service: str, name: str, state: str | None = None) -> Callable[[], Sequence[object]]:
    return lambda: demo.matching_alerts(service, name, state)


def _logs(service: str, pattern: str, level: str | None = None) -> Callable[[], Sequence[object]]:
    return lambda: demo.matching_logs(service, pattern, level)


def _knowledge(term: str) -> Callable[[], Sequence[object]]:
    return lambda: demo.knowledge_mentions(term)


HIKARI = r"HikariCP|HikariPool|Connection is not available"
NOT_AVAILABLE = "Connection is not available"
HTTP_502 = r"(?<![0-9])502(?![0-9])"


def _obs(tool: str, truth: Callable[[], Sequence[object]], *facts: str) -> Claim:
    path = {
        "query_metrics": "$.alerts[0]",
        "query_logs": "$.logs[0]",
        "lookup_knowledge": "$.evidence_blocks[0]",
    }
    return Claim("observation", tool, path[tool], truth, facts)


def _neg(tool: str, truth: Callable[[], Sequence[object]]) -> Claim:
    return Claim("negative_observation", tool, "$.no_evidence", truth)


CASES = [
    Case("order-hikari-en", "Does order-service have HikariCP pool-exhaustion logs?", "en",
         (_obs("query_logs", _logs("order-service", HIKARI), "HikariPool-1", NOT_AVAILABLE),)),
    Case("order-errorrate-zh", "order-service 现在有 HighErrorRate 告警吗？", "zh",
         (_obs("query_metrics", _alerts("order-service", "HighErrorRate", "firing"), "7.8%", "firing"),)),
    # "Still firing?" is answered from every state: the alert resolved, and the answer says so.
    Case("user-memory-firing-en", "Is user-service's HighMemoryUsage alert still firing?", "en",
         (_obs("query_metrics", _alerts("user-service", "HighMemoryUsage", "resolved"), "resolved"),)),
    Case("user-memory-any-en", "Does user-service have a HighMemoryUsage alert?", "en",
         (_obs("query_metrics", _alerts("user-service", "HighMemoryUsage"), "resolved", "88%"),)),
    Case("user-oom-zh", "user-service 有 OutOfMemoryError 日志吗？", "zh",
         (_obs("query_logs", _logs("user-service", "OutOfMemoryError"), "21:38:12", "OutOfMemoryError"),)),
    Case("user-oom-error-en", "Any ERROR logs with OutOfMemoryError on user-service?", "en",
         (_obs("query_logs", _logs("user-service", "OutOfMemoryError", "ERROR"), "Java heap space"),)),
    Case("payment-oom-zh", "payment-service 有 OutOfMemoryError 日志吗？", "zh",
         (_neg("query_logs", _logs("payment-service", "OutOfMemoryError")),)),
    Case("gateway-502-en", "Any 502 Bad Gateway errors on gateway in the last 30 minutes?", "en",
         (_obs("query_logs", _logs("gateway", r"502 Bad Gateway", "ERROR"), "502 Bad Gateway"),)),
    Case("gateway-502-zh", "gateway 有 502 错误日志吗？", "zh",
         (_obs("query_logs", _logs("gateway", HTTP_502, "ERROR"), "upstream=order-service"),)),
    Case("gateway-cpu-zh", "gateway 有 HighCPUUsage 告警吗？", "zh",
         (_neg("query_metrics", _alerts("gateway", "HighCPUUsage")),)),
    Case("inventory-restarts-zh", "inventory-service 最近重启过吗？有 PodRestartsHigh 告警吗？", "zh",
         (_obs("query_metrics", _alerts("inventory-service", "PodRestartsHigh"), "resolved", "5 restarts"),)),
    Case("order-timeout-zh", 'order-service 最近一小时有 "timed out after 30000ms" 的日志吗？', "zh",
         (_obs("query_logs", _logs("order-service", "timed out after 30000ms"), "timed out after 30000ms"),)),
    Case("runbook-cpu-zh", "HighCPUUsage 告警一般怎么排查？", "zh",
         (_obs("lookup_knowledge", _knowledge("HighCPUUsage"), "HighCPUUsage"),)),
    Case("runbook-pool-zh", "数据库连接池满了怎么办？", "zh",
         (_obs("lookup_knowledge", _knowledge("HikariCP"), "HikariCP"),)),
    Case("knowledge-none-en", "How do I cook braised pork?", "en",
         (_neg("lookup_knowledge", _knowledge("braised pork")),)),
    Case("payment-cpu-en", "Does payment-service have a HighCPUUsage alert right now?", "en",
         (_obs("query_metrics", _alerts("payment-service", "HighCPUUsage", "firing"), "92%", "25m"),)),
    Case("inventory-hikari-en", "Any HikariCP logs for inventory-service?", "en",
         (_neg("query_logs", _logs("inventory-service", HIKARI)),)),
    Case("order-latency-en", "Is there a HighLatency alert on order-service?", "en",
         (_obs("query_metrics", _alerts("order-service", "HighLatency"), "p99=4.2s"),)),
    Case("order-latency-zh", "order-service 有 HighLatency 告警吗？", "zh",
         (_obs("query_metrics", _alerts("order-service", "HighLatency"), "firing", "20m"),)),
    Case("gateway-errorrate-en", "Does gateway have a HighErrorRate alert?", "en",
         (_obs("query_metrics", _alerts("gateway", "HighErrorRate"), "5.6%"),)),
    Case("payment-latency-zh", "payment-service 有 HighLatency 告警吗？", "zh",
         (_obs("query_metrics", _alerts("payment-service", "HighLatency"), "resolved", "p99=1.8s"),)),
    Case("user-cpu-firing-en", "Does user-service have a HighCPUUsage alert firing?", "en",
         (_obs("query_metrics", _alerts("user-service", "HighCPUUsage", "resolved"), "resolved"),)),
    Case("user-cpu-zh", "user-service 有 HighCPUUsage 告警吗？", "zh",
         (_obs("query_metrics", _alerts("user-service", "HighCPUUsage"), "85%", "resolved"),)),
    Case("order-cpu-en", "Does order-service have a HighCPUUsage alert?", "en",
         (_neg("query_metrics", _alerts("order-service", "HighCPUUsage")),)),
    Case("inventory-mixed-negatives-zh",
         "inventory-service 有 HighCPUUsage 告警吗？有 HikariCP 日志吗？", "zh",
         (_neg("query_metrics", _alerts("inventory-service", "HighCPUUsage")),
          _neg("query_logs", _logs("inventory-service", HIKARI)))),
    Case("payment-mixed-en",
         "Does payment-service have a HighCPUUsage alert and any OutOfMemoryError logs?", "en",
         (_obs("query_metrics", _alerts("payment-service", "HighCPUUsage"), "92%"),
          _neg("query_logs", _logs("payment-service", "OutOfMemoryError")))),
    # Subjects the log vocabulary does not map: the question's own words are the query's term, so
    # the Full GC lines (WARN) are not ERROR hits and no channel-timeout ERROR line is cited.
    Case("payment-fullgc-error-en", "Are there ERROR logs mentioning Full GC on payment-service?", "en",
         (_neg("query_logs", _logs("payment-service", "Full GC", "ERROR")),)),
    Case("payment-callback-timeout-zh", "payment-service 有支付回调处理超时的日志吗？", "zh",
         (_obs("query_logs", _logs("payment-service", "支付回调处理超时"), "支付回调处理超时"),)),
    Case("user-login-failed-zh", "user-service 有用户登录失败的日志吗？", "zh",
         (_obs("query_logs", _logs("user-service", "用户登录失败"), "用户登录失败"),)),
    Case("inventory-liveness-en", "Did inventory-service log liveness probe failures?", "en",
         (_obs("query_logs", _logs("inventory-service", "liveness probe fail"), "Liveness probe failed"),)),
]  # fmt: skip


def test_table_is_large_and_distinct() -> None:
    assert len(CASES) >= 20
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.language for c in CASES} == {"zh", "en"}
    kinds = {tuple(claim.claim_type for claim in c.claims) for c in CASES}
    assert ("observation",) in kinds and ("negative_observation",) in kinds
    assert any(len(set(k)) == 2 for k in kinds)  # mixed


async def _check(
    case: Case, db: Database, build_pipeline: BuildPipeline, data_dir: Path | None = None
) -> None:
    result = await build_pipeline(data_dir=data_dir).run(case.query, None, case.language, Deadline.after(30))
    assert result.status == "SUCCESS", result.failure_reason
    assert result.verdict is not None and result.evidence is not None
    assert result.verdict["verdict"] == case.verdict, result.verdict.get("rationale")
    trace = await db.repo.get_trace(result.session_id)
    assert trace is not None

    claims: list[JSON] = result.evidence["claims"]
    assert [(c["claim_type"], c["evidence_bindings"][0]["tool_name"]) for c in claims] == [
        (e.claim_type, e.tool) for e in case.claims
    ], "exactly the expected claims, nothing out of scope"
    refs = {
        inv.id: {r["raw_path"]: r["text"] for r in inv.retrieval_details.get("evidence_refs", [])}
        for inv in trace.invocations
    }
    for claim, expected in zip(claims, case.claims, strict=True):
        truth = expected.truth()
        assert bool(truth) == (expected.claim_type == "observation"), (
            f"the demo data disagrees: {truth!r:.200}"
        )
        bindings = claim["evidence_bindings"]
        assert bindings[0]["raw_path"] == expected.path
        for binding in bindings:
            assert binding["tool_name"] == expected.tool
            if expected.claim_type == "negative_observation":
                assert binding["raw_path"] == "$.no_evidence"
            else:
                assert PATH_GRAMMAR[expected.tool].match(binding["raw_path"])
            # a real invocation of this session returned that path; the excerpt comes from its text
            assert binding["raw_path"] in refs[binding["source_invocation_id"]]
        excerpt = bindings[0]["evidence_excerpt"]
        for fact in expected.facts:
            assert fact in excerpt
            assert fact in repr(truth), f"{fact!r} is not in the demo data"
    assert result.gatekeeper_result is not None and result.gatekeeper_result["severity"] == "none"

    answer = result.answer
    assert guard.scan(answer, material.negative_claims(claims)) == []
    if any(c.claim_type == "negative_observation" for c in case.claims):
        assert any(phrase in answer.lower() for phrase in SAFE)
        # never widened: every call kept the question's service
        services = {
            inv.arguments.get("service") for inv in trace.invocations if inv.tool_name != "lookup_knowledge"
        }
        assert len(services) <= 1
    for expected in case.claims:
        for fact in expected.facts:
            if expected.tool == "query_metrics":  # the alert's own values reach the user, read aloud
                assert fact in answer or readable.value(fact) in answer, (fact, answer)


def answers_the_case(case: Case, result: Any, invocations: Sequence[Any]) -> bool:
    """Whether a session answered `case` (bench/bench_llm.py judges any backend with it): SUCCESS
    with the expected verdict, and claims that start with the expected ones, each citing a call
    about the service the question names (a true alert of another service is no answer), an
    observation's excerpt holding the alert name and the expected facts, a negative one citing
    $.no_evidence; the alert's values reach the answer."""
    verdict = (result.verdict or {}).get("verdict")
    claims = (result.evidence or {}).get("claims") or []
    if result.status != "SUCCESS" or verdict != case.verdict or len(claims) < len(case.claims):
        return False
    calls = {inv.id: inv for inv in invocations}
    for claim, expected in zip(claims, case.claims, strict=False):
        bindings = claim.get("evidence_bindings") or []
        if claim.get("claim_type") != expected.claim_type or not bindings:
            return False
        first = bindings[0]
        call = calls.get(first.get("source_invocation_id"))
        if first.get("tool_name") != expected.tool or call is None:
            return False
        service = call.arguments.get("service")
        if expected.tool != "lookup_knowledge" and not (service and str(service) in case.query):
            return False
        excerpt = str(first.get("evidence_excerpt", ""))
        if expected.claim_type == "negative_observation":
            if first.get("raw_path") != "$.no_evidence":
                return False
            continue
        truth = expected.truth()
        if not truth or not all(fact in excerpt for fact in expected.facts):
            return False
        if expected.tool == "query_metrics":
            alert = truth[0]
            if not isinstance(alert, dict) or str(alert["alert_name"]) not in excerpt:
                return False
            if not all(fact in (result.answer or "") for fact in expected.facts):
                return False
    return True


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_demo_question(case: Case, db: Database, build_pipeline: BuildPipeline) -> None:
    await _check(case, db, build_pipeline)


async def test_the_bench_judge_accepts_each_answer_and_refuses_another_question_s(
    db: Database, build_pipeline: BuildPipeline
) -> None:
    """answers_the_case: each offline answer answers its own case; the same session judged as the
    answer to another question (another service, alert or claim type) does not."""
    pipeline = build_pipeline()
    chosen = [c for c in CASES if c.id in {"payment-cpu-en", "user-memory-any-en", "payment-oom-zh"}]
    sessions = []
    for case in chosen:
        result = await pipeline.run(case.query, None, case.language, Deadline.after(30))
        trace = await db.repo.get_trace(result.session_id)
        assert trace is not None
        sessions.append((result, trace.invocations))
    for i, case in enumerate(chosen):
        for j, (result, invocations) in enumerate(sessions):
            assert answers_the_case(case, result, invocations) == (i == j), (case.id, j)


@pytest.mark.parametrize(
    ("query", "language", "no"),
    [
        ("inventory-service 一切正常吗？", "zh", "不是，"),
        ("Is everything OK with order-service?", "en", "No. "),
    ],
)
async def test_is_it_healthy_over_a_problem_is_answered_no(
    query: str, language: str, no: str, db: Database, build_pipeline: BuildPipeline
) -> None:
    """'Is it healthy?' asks whether all is well: over the errors and alerts the demo holds, the
    first line says no, never the yes that answers 'is there …?'."""
    result = await build_pipeline().run(query, None, language, Deadline.after(30))
    answer = result.answer or ""
    assert answer.startswith(no), answer
