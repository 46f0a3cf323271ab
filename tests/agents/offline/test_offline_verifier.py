"""OfflineVerifier: critical facts of a claim against its verified excerpts, and the verdict."""

from __future__ import annotations

from typing import Any

import pytest

from evigate.server.agents.base import JSON
from evigate.server.agents.offline.facts import critical_facts, fact_supported
from evigate.server.agents.offline.verifier import OfflineVerifier, verify
from evigate.server.deadline import Deadline
from evigate.server.understanding.vocabulary import SearchedWords

ALERT = "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m, severity=critical"
LOG = (
    "2026-07-08 23:05:28 ERROR order-service HikariPool-1 - Connection is not available, "
    "request timed out after 30000ms"
)
NONE = (
    "query_logs returned no evidence; evidence_status=no_evidence; query=inventory-service HikariCP; "
    "topic=application-logs; total=0; message=未找到匹配的日志"
)

# claim text, claim type, excerpt, {fact: (kind, supported)}
FACTS: list[tuple[str, str, str, dict[str, tuple[str, bool]]]] = [
    (
        "payment-service 当前存在 HighCPUUsage 告警（state=firing, current=92%, duration=25m）。",
        "observation",
        ALERT,
        {
            "payment-service": ("identifier", True),
            "HighCPUUsage": ("identifier", True),
            "state=firing": ("identifier", True),
            "current=92%": ("number", True),
            "duration=25m": ("number", True),
        },
    ),
    (
        "payment-service CPU 使用率为 95%。",
        "observation",
        ALERT,
        {"payment-service": ("identifier", True), "CPU": ("identifier", False), "95%": ("number", False)},
    ),
    (
        "order-service 当前存在 HighCPUUsage 告警。",
        "observation",
        ALERT,
        {"order-service": ("identifier", False), "HighCPUUsage": ("identifier", True)},
    ),
    (
        "payment-service 的 CPU 使用率为 92。",
        "observation",
        ALERT,
        {"payment-service": ("identifier", True), "CPU": ("identifier", False), "92": ("number", True)},
    ),
    (
        "HighCPUUsage lasted 25m.",
        "observation",
        ALERT,
        {"HighCPUUsage": ("identifier", True), "25m": ("number", True)},
    ),
    (
        "HighCPUUsage lasted 25 minutes.",
        "observation",
        ALERT,
        {"HighCPUUsage": ("identifier", True), "25": ("number", False)},
    ),
    (
        "order-service 日志出现 HikariPool-1 超时（30000ms）。",
        "observation",
        LOG,
        {
            "order-service": ("identifier", True),
            "HikariPool-1": ("identifier", True),
            "30000ms": ("number", True),
        },
    ),
    (
        "order-service logged HikariPool-1 at 2026-07-08 23:05:28.",
        "observation",
        LOG,
        {
            "order-service": ("identifier", True),
            "HikariPool-1": ("identifier", True),
            "2026-07-08": ("number", True),
            "23:05:28": ("number", True),
        },
    ),
    (
        "order-service 日志出现 HikariPool-2 超时。",
        "observation",
        LOG,
        {"order-service": ("identifier", True), "HikariPool-2": ("identifier", False)},
    ),
    (
        "Connection is not available on order-service.",
        "observation",
        LOG,
        {"not": ("negation", True), "order-service": ("identifier", True)},
    ),
    (
        "payment-service 没有 HighCPUUsage 告警。",
        "observation",
        ALERT,
        {
            "payment-service": ("identifier", True),
            "没有": ("negation", False),
            "HighCPUUsage": ("identifier", True),
        },
    ),
    (
        "当前查询未检索到 inventory-service 的 HikariCP 连接池耗尽日志。",
        "negative_observation",
        NONE,
        {
            "当前查询未检索到": ("negation", True),
            "inventory-service": ("identifier", True),
            "HikariCP": ("identifier", True),
        },
    ),
    (
        "This query found no matching evidence of HikariCP logs for inventory-service.",
        "negative_observation",
        NONE,
        {
            "This query found no matching evidence": ("negation", True),
            "HikariCP": ("identifier", True),
            "inventory-service": ("identifier", True),
        },
    ),
    (
        "当前查询未检索到 order-service 的 HikariCP 日志。",
        "negative_observation",
        NONE,
        {
            "当前查询未检索到": ("negation", True),
            "order-service": ("identifier", False),
            "HikariCP": ("identifier", True),
        },
    ),
    (
        "inventory-service 问题不存在。",
        "negative_observation",
        NONE,
        {"inventory-service": ("identifier", True), "问题不存在": ("negation", False)},
    ),
    (
        "HikariCP exhaustion was ruled out for inventory-service.",
        "negative_observation",
        NONE,
        {
            "HikariCP": ("identifier", True),
            "ruled out": ("negation", False),
            "inventory-service": ("identifier", True),
        },
    ),
    (
        "当前查询未检索到 inventory-service 的日志（total=0）。",
        "negative_observation",
        NONE,
        {
            "当前查询未检索到": ("negation", True),
            "inventory-service": ("identifier", True),
            "total=0": ("number", True),
        },
    ),
]


@pytest.mark.parametrize("text,claim_type,excerpt,expected", FACTS, ids=[row[0] for row in FACTS])
def test_fact_table(text: str, claim_type: str, excerpt: str, expected: dict[str, tuple[str, bool]]) -> None:
    facts = critical_facts(text)
    negative = claim_type == "negative_observation"
    got = {fact.text: (fact.kind, fact_supported(fact, [excerpt], negative_claim=negative)) for fact in facts}
    assert got == expected


def _input(
    claims: list[JSON], *, severity: str = "none", failed: set[str] | None = None, parse: str = "valid"
) -> JSON:
    checked = []
    for claim in claims:
        for index, binding in enumerate(claim["evidence_bindings"]):
            status = "fail" if claim["claim_id"] in (failed or set()) else "pass"
            checked.append(
                {
                    "claim_id": claim["claim_id"],
                    "tool_name": binding["tool_name"],
                    "source_invocation_id": binding["source_invocation_id"],
                    "raw_path": binding["raw_path"],
                    "matched_text": binding["evidence_excerpt"],
                    "status": status,
                    "binding_index": index,
                    "backfilled": False,
                }
            )
    return {
        "original_query": "payment-service 现在有 HighCPUUsage 告警吗？",
        "executor_final_answer": "{}",
        "executor_structured_output": {"answer_version": "executor_evidence_v2", "claims": claims},
        "executor_output_parse_status": {"status": parse, "detail": ""},
        "tool_trace_summary": [],
        "gatekeeper_result": {"status": "pass", "severity": severity, "checked_bindings": checked},
        "retry_context": None,
    }


def _claim(
    claim_id: str, text: str, excerpt: str, claim_type: str = "observation", path: str = "$.alerts[0]"
) -> JSON:
    return {
        "claim_id": claim_id,
        "claim_type": claim_type,
        "claim_text": text,
        "support_level": "direct",
        "evidence_bindings": [
            {
                "tool_name": "query_metrics",
                "source_invocation_id": 517,
                "raw_path": path,
                "evidence_excerpt": excerpt,
            }
        ],
    }


GOOD = _claim(
    "claim-1",
    "payment-service 当前存在 HighCPUUsage 告警（state=firing, current=92%, duration=25m）。",
    ALERT,
)
NEGATIVE = _claim(
    "claim-2",
    "当前查询未检索到 inventory-service 的 HikariCP 连接池耗尽日志。",
    NONE,
    "negative_observation",
    "$.no_evidence",
)
WRONG_NUMBER = _claim("claim-3", "payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 95%。", ALERT)
OVERSTATED = _claim(
    "claim-4",
    "inventory-service 不存在 HikariCP 连接池问题，已排除。",
    NONE,
    "negative_observation",
    "$.no_evidence",
)
UNSCOPED = _claim(
    "claim-5", "inventory-service 没有 HikariCP 日志。", NONE, "negative_observation", "$.no_evidence"
)


@pytest.mark.parametrize(
    "claims,kwargs,verdict",
    [
        ([GOOD], {}, "PASS"),
        ([NEGATIVE], {}, "PASS"),
        ([GOOD, NEGATIVE], {}, "PASS"),
        ([GOOD], {"severity": "low_confid"}, "LOW_CONFID"),
        ([GOOD], {"severity": "reject"}, "REJECT"),
        ([GOOD], {"parse": "invalid"}, "REJECT"),
        ([], {}, "REJECT"),
        ([WRONG_NUMBER], {}, "REJECT"),
        ([GOOD, WRONG_NUMBER], {}, "LOW_CONFID"),
        ([GOOD, OVERSTATED], {}, "REJECT"),
        ([UNSCOPED], {}, "REJECT"),
        ([GOOD], {"failed": {"claim-1"}}, "REJECT"),
    ],
)
def test_verdicts(claims: list[JSON], kwargs: dict[str, Any], verdict: str) -> None:
    result = verify(_input(claims, **kwargs))
    assert result["verdict"] == verdict, result["rationale"]
    assert set(result) == {
        "verdict",
        "groundedness_score",
        "critical_fact_count",
        "claim_checks",
        "facts_checked",
        "rationale",
    }
    assert [check["claim_id"] for check in result["claim_checks"]] == [c["claim_id"] for c in claims]


def test_scores_and_fact_rows() -> None:
    result = verify(_input([GOOD, WRONG_NUMBER]))
    assert result["critical_fact_count"] == len(result["facts_checked"]) == 9
    supported = sum(1 for row in result["facts_checked"] if row["supported"])
    assert result["groundedness_score"] == round(supported / 9, 4)
    wrong = result["claim_checks"][1]
    assert wrong["supported"] is False and set(wrong["unsupported_facts"]) == {"CPU", "95%"}
    assert {row["kind"] for row in result["facts_checked"]} == {"identifier", "number"}


def test_uses_the_excerpt_not_the_raw_text() -> None:
    data = _input([GOOD])
    data["executor_final_answer"] = "payment-service CPU 95%"
    assert verify(data)["verdict"] == "PASS"


def test_binding_found_by_path_without_binding_index() -> None:
    data = _input([GOOD])
    for checked in data["gatekeeper_result"]["checked_bindings"]:
        del checked["binding_index"]
    assert verify(data)["verdict"] == "PASS"


def test_adversarial_shapes_do_not_crash() -> None:
    data = _input([GOOD])
    data["executor_structured_output"] = {"claims": [1, "x", {"claim_id": 3, "evidence_bindings": "no"}]}
    data["gatekeeper_result"] = {"checked_bindings": "nope"}
    assert verify(data)["verdict"] == "REJECT"


async def test_stage_wrapper() -> None:
    output = await OfflineVerifier().verify(_input([GOOD]), Deadline.none())
    assert output.data["verdict"] == "PASS" and output.prompt_version == "offline-verifier-v2"


@pytest.mark.parametrize(
    "text",
    [
        "当前查询未检索到 inventory-service 的 HikariCP 连接池耗尽日志，连接池运行正常。",
        "This query found no matching evidence for inventory-service; we confirmed there is no issue.",
    ],
)
def test_overstatements_the_answer_guard_knows_are_rejected(text: str) -> None:
    claim = _claim("claim-9", text, NONE, "negative_observation", "$.no_evidence")
    result = verify(_input([claim]))
    assert result["verdict"] == "REJECT"
    assert result["claim_checks"][0]["supported"] is False


def test_a_quoted_source_line_is_not_an_overstatement() -> None:
    excerpt = "2026-07-08 23:10:00 INFO order-service Pool check: leak ruled out for HikariPool-1"
    claim = _claim("claim-1", f"order-service 日志中检索到匹配记录：“{excerpt}”。", excerpt, path="$.logs[0]")
    assert verify(_input([claim]))["verdict"] == "PASS"


# A log question asked in Chinese, its term searched as written (nothing found), then searched again
# ranked with the words an English log prints (a model's phrasing): the lines that hold the searched
# words answer it; a line the ranking only put first does not.
CLIENTS_QUESTION = "payment-service 的客户端连接是不是太多了？日志里怎么说？"
TOO_MANY = (
    "2026-11-20 11:59:44.238 FATAL payment-service sorry, too many clients already | pod=payment-service-0"
)
CHECKPOINT = "2026-11-20 11:40:02.118 LOG payment-service checkpoint starting: time | pod=payment-service-0"


def _log_claim(excerpt: str, invocation: int) -> JSON:
    claim = _claim("claim-1", f"payment-service 的日志中检索到匹配记录，例如：“{excerpt}”。", excerpt)
    binding = claim["evidence_bindings"][0]
    binding.update(tool_name="query_logs", source_invocation_id=invocation, raw_path="$.logs[0]")
    return claim


def _searched(claim: JSON, words: str, invocation: int = 9) -> JSON:
    given = _input([claim])
    given["original_query"] = CLIENTS_QUESTION
    given["tool_trace_summary"] = [
        {"source_invocation_id": invocation, "tool_name": "query_logs", "searched": words},
    ]
    return verify(given)


def test_lines_holding_the_words_of_the_ranked_search_that_found_them_are_on_subject() -> None:
    result = _searched(_log_claim(TOO_MANY, 9), "client connection is too many")
    assert result["verdict"] == "PASS", result["rationale"]


def test_a_line_the_ranking_put_first_without_the_searched_words_is_out_of_scope() -> None:
    result = _searched(_log_claim(CHECKPOINT, 9), "client connection is too many")
    assert result["verdict"] == "REJECT"
    assert "范围不符" in result["claim_checks"][0]["reason"]


def test_searched_words_count_only_for_the_lines_their_own_search_found() -> None:
    result = _searched(_log_claim(TOO_MANY, 9), "client connection is too many", invocation=10)
    assert result["verdict"] == "REJECT"


def test_a_line_needs_most_of_the_searched_words_not_one() -> None:
    words = SearchedWords("sorry too many clients")
    assert words.matches("FATAL: sorry, too many clients already")
    assert words.matches("FATAL: too many clients")  # three of four
    assert not words.matches("could not receive data from client: Connection reset by peer")
    assert SearchedWords("deadline").matches("proxy error: context deadline exceeded")
    assert not SearchedWords("is the").matches("is the")  # no word of content
