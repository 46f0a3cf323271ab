"""Log questions whose subject the vocabulary does not map ("Full GC", "用户登录失败", "liveness probe"):
the subject becomes an exact term of the query, lines without it are never cited, and the Verifier
refuses an observation whose cited log lines lack it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evigate.server.agents.base import JSON
from evigate.server.agents.offline.executor import OfflineExecutor
from evigate.server.agents.offline.verifier import verify
from evigate.server.pipeline.parse import parse_executor_output
from evigate.server.understanding.entities import extract
from tests.agents.offline.demo_catalog import TEST_CATALOG, TEST_VIEW
from tests.agents.offline.fakes import FakeToolBox, make_task
from tests.agents.offline.test_offline_demo_world import session

HIKARI = {"pattern": "HikariCP|HikariPool|Connection is not available"}
LIVENESS = {"pattern": r"(?i)(?<![a-z0-9])liveness[\s_-]+probe[\s_-]+fail[a-z]*"}
TIMEOUT = {"pattern": "(?i)timeout|timed out|超时"}

# question → (term name, query arguments) in query order
SUBJECTS: list[tuple[str, list[tuple[str, dict[str, str]]]]] = [
    ("Are there ERROR logs mentioning Full GC on payment-service?", [("Full GC", {"keyword": "Full GC"})]),
    ("Any Full GC logs on payment-service?", [("Full GC", {"keyword": "Full GC"})]),
    (
        "payment-service 有支付回调处理超时的日志吗？",
        [("支付回调处理超时", {"keyword": "支付回调处理超时"})],  # 超时 is part of the subject
    ),
    ("user-service 有用户登录失败的日志吗？", [("用户登录失败", {"keyword": "用户登录失败"})]),
    ("Did inventory-service log liveness probe failures?", [("liveness probe failures", LIVENESS)]),
    (
        "payment-service 有支付回调日志和超时日志吗？",
        [("支付回调", {"keyword": "支付回调"}), ("timeout", TIMEOUT)],
    ),
    (
        'order-service 最近一小时有 "timed out after 30000ms" 的日志吗？',
        [("timed out after 30000ms", {"keyword": "timed out after 30000ms"})],
    ),
    # Mapped by the vocabulary or by literals: no subject of their own.
    ("Does order-service have HikariCP pool-exhaustion logs?", [("HikariCP", HIKARI)]),
    ("inventory-service 有没有 HikariCP 连接池耗尽的日志？", [("HikariCP", HIKARI)]),
    (
        "Does user-service log OOM errors?",
        [
            (
                "OutOfMemoryError",
                {"pattern": r"(?i)OutOfMemoryError|OOMKilled|out of memory|(?<![a-z])oom(?![a-z])|内存溢出"},
            )
        ],
    ),
    (
        "Any 502 Bad Gateway errors on gateway in the last 30 minutes?",
        [("502", {"pattern": "(?<![0-9])502(?![0-9])"})],
    ),
    ("payment-service 现在有 HighCPUUsage 告警吗？同时看看有没有 ERROR 日志", []),
    ("user-service 最近两小时有警告日志吗", []),
    (
        "order-service and inventory-service: HikariCP logs, and is HighErrorRate firing now?",
        [("HikariCP", HIKARI)],
    ),
]


@pytest.mark.parametrize("question,terms", SUBJECTS, ids=[q for q, _ in SUBJECTS])
def test_subject_terms(question: str, terms: list[tuple[str, dict[str, str]]]) -> None:
    entities = extract(question, TEST_VIEW)
    assert "log" in entities.intents
    assert [(term.name, term.arguments()) for term in entities.log_terms] == terms


def test_an_inflected_subject_is_a_precise_pattern() -> None:
    (term,) = extract("Did inventory-service log liveness probe failures?", TEST_VIEW).log_terms
    assert term.matches(
        "WARN inventory-service Liveness probe failed: HTTP probe failed with statuscode: 503"
    )
    assert not term.matches("WARN inventory-service Readiness probe failed")
    assert not term.matches("INFO inventory-service Stock reserved sku=SKU-1688 qty=1")


def test_no_subject_outside_log_questions() -> None:
    assert extract("How do I cook braised pork?", TEST_VIEW).log_terms == ()
    assert extract("Is there a HighLatency alert on order-service?", TEST_VIEW).log_terms == ()


# --- the demo world: the query holds the subject, the cited lines hold it too -------------------------

DEMO: list[tuple[str, str, dict[str, Any], str, str]] = [
    (
        "Are there ERROR logs mentioning Full GC on payment-service?",
        "en",
        {"service": "payment-service", "level": "ERROR", "keyword": "Full GC"},
        "negative_observation",
        "query=payment-service ERROR Full GC",
    ),
    (
        "Any Full GC logs on payment-service?",
        "en",
        {"service": "payment-service", "keyword": "Full GC"},
        "observation",
        "WARN payment-service Full GC (Ergonomics)",
    ),
    (
        "payment-service 有支付回调处理超时的日志吗？",
        "zh",
        {"service": "payment-service", "keyword": "支付回调处理超时"},
        "observation",
        "payment-service 支付回调处理超时 orderId=",
    ),
    (
        "user-service 有用户登录失败的日志吗？",
        "zh",
        {"service": "user-service", "keyword": "用户登录失败"},
        "observation",
        "user-service 用户登录失败 uid=",
    ),
    (
        "Did inventory-service log liveness probe failures?",
        "en",
        {"service": "inventory-service", **LIVENESS},
        "observation",
        "WARN inventory-service Liveness probe failed",
    ),
]


@pytest.mark.parametrize("question,language,arguments,claim_type,excerpt", DEMO, ids=[d[0] for d in DEMO])
async def test_demo_world_subject_questions(
    question: str, language: str, arguments: dict[str, Any], claim_type: str, excerpt: str
) -> None:
    structured, verdict, _, recorder = await session(question, language)
    assert [(name, args) for _, name, args, _ in recorder.rows] == [("query_logs", arguments)]
    assert verdict["verdict"] == "PASS", verdict["rationale"]
    (claim,) = structured["claims"]
    assert claim["claim_type"] == claim_type
    assert excerpt in claim["evidence_bindings"][0]["evidence_excerpt"]
    (term,) = extract(question, TEST_VIEW).log_terms
    for binding in claim["evidence_bindings"]:
        if claim_type == "observation":
            assert term.matches(binding["evidence_excerpt"])
        else:
            assert binding["raw_path"] == "$.no_evidence"


# --- never cite lines without the subject --------------------------------------------------------------


class KeywordBlindToolBox(FakeToolBox):
    """A log tool that ignores keyword and pattern: it returns the service's lines, on topic or not."""

    def __hash__(self) -> int:
        return id(self)

    def _run(self, tool: str, args: JSON) -> tuple[str, list[JSON], Any]:
        return super()._run(tool, {k: v for k, v in args.items() if k not in ("keyword", "pattern")})


async def test_lines_without_the_subject_are_never_cited() -> None:
    tools = KeywordBlindToolBox()
    question = "Are there WARN logs mentioning Full GC on payment-service?"
    output = await OfflineExecutor(catalog=TEST_CATALOG).execute(make_task(tools, question, "en"))
    data, status = parse_executor_output(output.raw_text)
    assert status["status"] == "valid"
    assert tools.calls == [
        ("query_logs", {"service": "payment-service", "level": "WARN", "keyword": "Full GC"})
    ]
    assert "Slow response" in json.dumps(tools.results[0].retrieval_details)  # the tool did return a line
    assert data["claims"] == []
    (missing,) = data["missing_info"]
    assert "Full GC" in missing and "Could not check" in missing


async def test_each_term_of_a_compound_question_is_queried_on_its_own() -> None:
    tools = FakeToolBox()
    output = await OfflineExecutor(catalog=TEST_CATALOG).execute(
        make_task(tools, "payment-service 有支付回调日志和超时日志吗？")
    )
    data = json.loads(output.raw_text)
    assert tools.calls == [
        ("query_logs", {"service": "payment-service", "keyword": "支付回调"}),
        ("query_logs", {"service": "payment-service", "pattern": "(?i)timeout|timed out|超时"}),
    ]
    assert not any("该关键字本次未能查询" in item for item in data["missing_info"])


# --- the Verifier's scope check ---------------------------------------------------------------------------

CHANNEL_TIMEOUT = (
    "2026-07-08 20:05:18 ERROR payment-service Payment P215202 failed: channel timeout after 5000ms"
    " | logger=com.shop.payment.api.PaymentController"
)
FULL_GC = (
    "2026-07-08 23:04:10 WARN payment-service Full GC (Ergonomics) pause 1.2s, heap 3.1G->2.9G | logger=gc"
)


def _verifier_input(question: str, excerpt: str, claim_type: str = "observation") -> JSON:
    path = "$.no_evidence" if claim_type == "negative_observation" else "$.logs[0]"
    text = (
        "当前查询未检索到 payment-service 的日志。"
        if claim_type == "negative_observation"
        else f"payment-service 的日志中检索到匹配记录：“{excerpt.split(' | ', maxsplit=1)[0]}”。"
    )
    binding = {
        "tool_name": "query_logs",
        "source_invocation_id": 7,
        "raw_path": path,
        "evidence_excerpt": excerpt,
    }
    claim = {
        "claim_id": "claim-1",
        "claim_type": claim_type,
        "claim_text": text,
        "support_level": "direct",
        "evidence_bindings": [binding],
    }
    checked = {
        **binding,
        "claim_id": "claim-1",
        "matched_text": excerpt,
        "status": "pass",
        "binding_index": 0,
    }
    del checked["evidence_excerpt"]
    return {
        "original_query": question,
        "executor_final_answer": "{}",
        "executor_structured_output": {"answer_version": "executor_evidence_v2", "claims": [claim]},
        "executor_output_parse_status": {"status": "valid", "detail": ""},
        "tool_trace_summary": [],
        "gatekeeper_result": {"status": "pass", "severity": "none", "checked_bindings": [checked]},
        "retry_context": None,
    }


def test_verifier_refuses_lines_without_the_subject() -> None:
    # What the Executor used to answer: ERROR lines about channel timeouts for a Full GC question.
    result = verify(
        _verifier_input("Are there ERROR logs mentioning Full GC on payment-service?", CHANNEL_TIMEOUT)
    )
    assert result["verdict"] == "REJECT"
    (check,) = result["claim_checks"]
    assert check["supported"] is False and "Full GC" in check["reason"]


def test_verifier_passes_lines_with_the_subject() -> None:
    result = verify(_verifier_input("Any Full GC logs on payment-service?", FULL_GC))
    assert result["verdict"] == "PASS", result["rationale"]


def test_verifier_scope_needs_a_subject() -> None:
    # service + level only: any ERROR line of payment-service answers it
    assert (
        verify(_verifier_input("payment-service 有没有 ERROR 日志？", CHANNEL_TIMEOUT))["verdict"] == "PASS"
    )
    # an alert question citing a log line is judged on its facts alone, as before
    assert (
        verify(_verifier_input("payment-service 现在有 HighCPUUsage 告警吗？", CHANNEL_TIMEOUT))["verdict"]
        == "PASS"
    )


def test_verifier_scope_leaves_negative_observations_alone() -> None:
    none = (
        "query_logs returned no evidence; evidence_status=no_evidence; query=payment-service ERROR Full GC; "
        "total=0; message=未找到匹配的日志"
    )
    data = _verifier_input(
        "Are there ERROR logs mentioning Full GC on payment-service?", none, "negative_observation"
    )
    assert verify(data)["verdict"] == "PASS"
