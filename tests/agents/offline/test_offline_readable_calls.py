"""A call that could not run, as the offline Composer's could-not-check line and the Executor's
missing-information item: words a person reads (what could not be checked, and why), never the raw
call (`lookup_knowledge(query=…)`), and a knowledge base that is not there is "not configured",
not a failure. Each line passes the sentence check bound to its failed call, in both languages."""

from __future__ import annotations

import re
from typing import cast

import pytest

from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_check import check
from evigate.rules.sentence_material import FAILED_CALL_PREFIX, MISSING_PREFIX
from evigate.rules.sentence_types import ClaimFacts, Excerpt, Sentence, SentenceMaterial
from evigate.server.agents.offline import answer_writer, claims, readable, readable_calls
from evigate.server.agents.offline.calls import PlannedCall
from evigate.server.agents.offline.survey import survey_gaps
from evigate.server.tools.calls import ToolCallResult
from evigate.server.understanding.entities import Entities
from evigate.server.understanding.vocabulary import LogTerm

PROM = "prometheus at http://127.0.0.1:59707 is unreachable: ConnectError: All connection attempts failed"
AM = "alertmanager at http://127.0.0.1:40191 is unreachable: ConnectError: All connection attempts failed"
NO_KNOWLEDGE = "knowledge data unavailable: /data/world/knowledge is not a directory"
CALLS = [
    ("query_promql", {"signal": "latency_p99", "service": "order-router", "since": "12h"}, PROM),
    ("query_promql", {"service": "gateway", "about": "Is there a GatewayUpstream5xxRatioHigh alert?"}, PROM),
    ("query_metrics", {"service": "gateway", "alert_name": "GatewayUpstream5xxRatioHigh"}, AM),
    ("query_metrics", {"service": "order-router"}, AM),
    ("query_logs", {"service": "RiskScorer", "level": "ERROR"}, "no logs of RiskScorer are available"),
    ("summarize_logs", {"service": "RiskScorer", "level": "WARN", "since": "1h"}, "log index unreadable"),
    ("lookup_knowledge", {"query": "RedisEvictionsHigh steps"}, "knowledge index unreadable: timeout"),
    ("lookup_knowledge", {"query": "RedisEvictionsHigh steps"}, NO_KNOWLEDGE),
]
# what the user must never read: a call's syntax, its argument keys, a tool's name
RAW = re.compile(
    r"\w+\([^)]*=|\b(?:query|service|signal|since|about|alert_name|level)=|query_\w+|lookup_knowledge"
    r"|summarize_logs|list_services"
)


def failed_text(tool: str, arguments: dict[str, str], error: str) -> str:
    """The failed call as the pipeline's material describes it (server/pipeline/material.py)."""
    return f"{tool}({', '.join(f'{k}={v}' for k, v in arguments.items())}) failed ({error})"


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize(("tool", "arguments", "error"), CALLS)
def test_a_failed_call_reads_as_words_and_passes_the_check(
    tool: str, arguments: dict[str, str], error: str, language: str
) -> None:
    raw = failed_text(tool, arguments, error)
    text = readable.failed_call(raw, language == "zh")
    assert not RAW.search(text), text
    material = SentenceMaterial(
        (ClaimFacts(f"{FAILED_CALL_PREFIX}7", "", raw, (Excerpt(raw, raw, tool),), True),), language=language
    )
    result = check([Sentence(SentenceKind.COULD_NOT_CHECK, text, (f"{FAILED_CALL_PREFIX}7",))], material)
    assert [(v.rule_id, v.token) for v in result.sentences[0]] == [], text


@pytest.mark.parametrize(
    ("language", "said"), [("en", "no knowledge base is configured"), ("zh", "未配置知识库")]
)
def test_a_missing_knowledge_base_is_not_configured_not_failed(language: str, said: str) -> None:
    text = readable.failed_call(
        failed_text("lookup_knowledge", {"query": "x"}, NO_KNOWLEDGE), language == "zh"
    )
    assert said in text
    assert "fail" not in text.lower() and "失败" not in text


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize(("tool", "arguments", "error"), CALLS)
def test_the_missing_information_item_is_the_could_not_check_line(
    tool: str, arguments: dict[str, str], error: str, language: str
) -> None:
    call = PlannedCall(tool, dict(arguments))
    result = ToolCallResult(1, tool, dict(arguments), "failed", error, None, {})
    item = claims.missing_text(call, result, language)
    assert item == readable.failed_call(failed_text(tool, arguments, error), language == "zh")


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_call_listed_twice_is_listed_once(language: str) -> None:
    raw = failed_text(*CALLS[2])
    call = PlannedCall(CALLS[2][0], dict(CALLS[2][1]))
    item = claims.missing_text(
        call, ToolCallResult(1, call.tool_name, call.arguments, "failed", AM, None, {}), language
    )
    cpu = "HighCPUUsage, service=gateway, state=firing, current=92%, threshold=80%, severity=critical"
    material = SentenceMaterial(
        (
            ClaimFacts(
                "claim-1",
                "observation",
                "gateway's HighCPUUsage alert is firing.",
                (Excerpt(cpu, cpu, "query_metrics", "$.alerts[0]"),),
            ),
            ClaimFacts(f"{FAILED_CALL_PREFIX}7", "", raw, (Excerpt(raw, raw, call.tool_name),), True),
            ClaimFacts(f"{MISSING_PREFIX}1", "", item, (Excerpt(item, item),), True),
        ),
        question="Is there a GatewayUpstream5xxRatioHigh alert on gateway?",
        language=language,
    )
    written = answer_writer.write({"verdict": "PASS"}, material)
    assert written[0].kind == SentenceKind.HEADLINE  # the finding heads the answer; the list follows
    lines = [s.text for s in written if s.kind == SentenceKind.COULD_NOT_CHECK]
    assert len(lines) == 1, lines


class _Surveyed:
    """What survey_gaps reads of the question's entities."""

    services = ("order-service", "payment-service")


TERM = LogTerm("HikariCP", "HikariCP", None, "HikariCP 连接池", "HikariCP pool")


def missing_items(language: str) -> list[str]:
    """Every missing-information item the offline Executor writes, as it writes it."""
    zh = language == "zh"
    call = PlannedCall("query_logs", {"service": "order-service", "keyword": "HikariCP"})
    found = ToolCallResult(1, call.tool_name, call.arguments, "success", None, {"logs": []}, {})
    return [
        *survey_gaps(cast(Entities, _Surveyed()), set(), False, language),
        claims.missing_text(call, found, language),
        claims.off_subject_text(call, TERM, language),
        claims.unqueried_text(TERM, language),
        readable_calls.not_citable("lookup_knowledge", {"query": "HighLatency steps"}, zh),
    ]


@pytest.mark.parametrize("language", ["zh", "en"])
def test_every_missing_information_item_passes_as_its_own_could_not_check_line(language: str) -> None:
    for item in missing_items(language):
        assert not RAW.search(item), item
        claim_id = f"{MISSING_PREFIX}1"
        material = SentenceMaterial(
            (ClaimFacts(claim_id, "", item, (Excerpt(item, item),), True),), language=language
        )
        result = check([Sentence(SentenceKind.COULD_NOT_CHECK, item, (claim_id,))], material)
        assert [(v.rule_id, v.token) for v in result.sentences[0]] == [], item
