"""Rank, then write: a cause question ranks the service's lines against its own words, and reads
what the service logged just before its symptom first showed."""

from __future__ import annotations

from typing import Any

from evigate.rules.enums import ToolName
from evigate.rules.types import EvidenceRef
from evigate.server.agents.offline import relevance_calls as r
from evigate.server.agents.offline import widening
from evigate.server.agents.offline.calls import SUMMARIZE_LOGS, PlannedCall
from evigate.server.agents.offline.executor import build_evidence
from evigate.server.agents.offline.verifier import off_subject
from evigate.server.sources.services import CatalogView
from evigate.server.tools.calls import ToolCallResult
from evigate.server.understanding.entities import extract
from evigate.server.understanding.vocabulary import LogTerm

VIEW = CatalogView({"ledger-api": ("log",)})
AVAILABLE = {ToolName.QUERY_LOGS, SUMMARIZE_LOGS}
TIMEOUT = LogTerm("socket timeout", "socket timeout", None, "套接字超时", "socket timeout")


def _result(call: PlannedCall, *texts: str, raw: dict[str, Any] | None = None) -> ToolCallResult:
    refs = [{"raw_path": f"$.logs[{i}]", "text": text} for i, text in enumerate(texts)]
    refs = refs or [{"raw_path": "$.no_evidence", "text": "query_logs returned no evidence"}]
    status = "supported" if texts else "no_evidence"
    return ToolCallResult(
        1,
        call.tool_name,
        call.arguments,
        "success",
        None,
        raw,
        {"evidence_status": status, "evidence_refs": refs},
    )


def test_a_cause_question_ranks_the_service_lines_by_its_own_words() -> None:
    question = "Why is ledger-api slow to post entries?"
    (call,) = r.relevance_calls(extract(question, VIEW), question, AVAILABLE)
    assert call.tool_name == ToolName.QUERY_LOGS and call.purpose == r.RELEVANCE
    assert call.service == "ledger-api" and call.arguments["query"] == "Why is slow to post entries?"
    # a question that asks for no cause, or names no known service, is not ranked
    for other in ("Show ledger-api logs", "Why is billing slow?"):
        assert r.relevance_calls(extract(other, VIEW), other, AVAILABLE) == []


def test_a_ranking_that_found_nothing_says_nothing() -> None:
    call = PlannedCall(
        ToolName.QUERY_LOGS, {"service": "ledger-api", "query": "x"}, "ledger-api", purpose=r.RELEVANCE
    )
    refs = [EvidenceRef(raw_path=f"$.logs[{i}]", text=f"line {i}") for i in range(8)]
    assert len(r.cited(call, refs)) == r.MAX_RANKED
    assert r.cited(call, [EvidenceRef(raw_path="$.no_evidence", text="none")]) == []


def _symptom(total: int, *lines: str) -> tuple[PlannedCall, ToolCallResult]:
    call = PlannedCall(
        ToolName.QUERY_LOGS, {"service": "ledger-api", **TIMEOUT.arguments()}, "ledger-api", term=TIMEOUT
    )
    return call, _result(call, *lines, raw={"logs": list(lines), "total": total})


def test_the_minute_before_the_first_occurrence_is_read() -> None:
    question = "What is causing socket timeout in ledger-api?"
    symptom = _symptom(
        2,
        "2031-03-04 05:06:09.500 ERROR ledger-api socket timeout",
        "2031-03-04 05:06:07 ERROR ledger-api socket timeout",
    )
    assert r.first_calls(question, [symptom], AVAILABLE) == []  # every line was returned
    (before,) = r.before_calls(question, [symptom], AVAILABLE)
    assert before.purpose == r.BEFORE and before.term == TIMEOUT
    assert before.arguments == {
        "service": "ledger-api",
        "since": "2031-03-04T05:05:07",
        "until": "2031-03-04T05:06:07",
        "limit": r.BEFORE_LIMIT,
    }
    assert r.before_calls("Show ledger-api socket timeout logs", [symptom], AVAILABLE) == []


def test_more_lines_than_returned_ask_the_templates_when_they_first_showed() -> None:
    question = "Why does ledger-api log socket timeout?"
    symptom = _symptom(900, "2031-03-04 05:06:09 ERROR ledger-api socket timeout")
    (first,) = r.first_calls(question, [symptom], AVAILABLE)
    assert first.tool_name == SUMMARIZE_LOGS and first.purpose == r.FIRST
    assert first.arguments == {"service": "ledger-api", "limit": r.FIRST_LIMIT}
    templates = _result(
        first,
        'template="socket timeout after <*>ms" count=899 first=2031-03-04 04:59:58 last=2031-03-04 05:06:09',
        'template="heartbeat ok" count=3 first=2031-03-04 04:00:00 last=2031-03-04 05:00:00',
    )
    (before,) = r.before_calls(question, [symptom, (first, templates)], AVAILABLE)
    assert before.arguments["until"] == "2031-03-04T04:59:58"


def test_the_lines_before_are_quoted_with_the_first_line_of_the_symptom() -> None:
    call = PlannedCall(ToolName.QUERY_LOGS, {}, "ledger-api", term=TIMEOUT, purpose=r.BEFORE)
    texts = [
        "2031-03-04 05:06:07.200 ERROR ledger-api socket timeout (pool-b)",
        "2031-03-04 05:06:07 ERROR ledger-api socket timeout (pool-a)",
        "2031-03-04 05:06:06 WARN ledger-api pool size changed to 2",
        "2031-03-04 05:06:01 INFO ledger-api settings reloaded",
    ]
    refs = [EvidenceRef(raw_path=f"$.logs[{i}]", text=t) for i, t in enumerate(texts)]
    cited = r.cited(call, refs)
    assert [ref.text for ref in cited] == [texts[1], texts[2], texts[3]]
    text = r.observation_text(call, cited, "en")
    assert "pool size changed to 2" in text and "socket timeout (pool-a)" in text
    # no line of the symptom: nothing to put the lines before in context of
    assert r.cited(call, refs[2:]) == []
    # the verifier reads the lines beside a line of the subject as its context, not off subject
    assert off_subject([t for t in texts[1:]], [TIMEOUT]) == []
    assert off_subject(texts[2:], [TIMEOUT]) == texts[2:]


def test_a_survey_ranks_its_window_widened_as_its_other_log_checks() -> None:
    question = "What is wrong with ledger-api? Why?"
    (call,) = r.relevance_calls(extract(question, VIEW), question, AVAILABLE)
    assert call.arguments["since"] == "1h"
    assert widening.widenable(call, _result(call), asked_window=False)
    named = "Why is ledger-api slow over the last 30 minutes?"
    (asked,) = r.relevance_calls(extract(named, VIEW), named, AVAILABLE)
    assert asked.arguments["since"] == "30m"
    assert not widening.widenable(asked, _result(asked), asked_window=True)


def test_a_survey_quotes_the_lines_before_alone() -> None:
    question = "What is causing socket timeout in ledger-api?"
    symptom = _symptom(1, "2031-03-04 05:06:07 ERROR ledger-api socket timeout")
    (call,) = r.before_calls(question, [symptom], AVAILABLE, anchored=False)
    assert call.purpose == r.BEFORE_ONLY
    texts = [
        "2031-03-04 05:06:07 ERROR ledger-api socket timeout (pool-a)",
        "2031-03-04 05:06:06 WARN ledger-api pool size changed to 2",
    ]
    refs = [EvidenceRef(raw_path=f"$.logs[{i}]", text=t) for i, t in enumerate(texts)]
    (cited,) = r.cited(call, refs)
    assert cited.text == texts[1]
    assert "pool size changed to 2" in r.observation_text(call, [cited], "zh")


def test_the_lines_before_are_a_claim_of_their_own() -> None:
    symptom_call = PlannedCall(
        ToolName.QUERY_LOGS, {"service": "ledger-api", **TIMEOUT.arguments()}, "ledger-api", term=TIMEOUT
    )
    lines = [f"2031-03-04 05:06:0{i} ERROR ledger-api socket timeout #{i}" for i in range(3)]
    ranked = PlannedCall(
        ToolName.QUERY_LOGS, {"service": "ledger-api", "query": "q"}, "ledger-api", purpose=r.RELEVANCE
    )
    before = PlannedCall(ToolName.QUERY_LOGS, {}, "ledger-api", term=TIMEOUT, purpose=r.BEFORE_ONLY)
    other = PlannedCall(ToolName.QUERY_LOGS, {"service": "ledger-api", "level": "ERROR"}, "ledger-api")
    results = [
        (symptom_call, _result(symptom_call, *lines)),
        (ranked, _result(ranked, *lines)),
        (other, _result(other, *lines)),
        (before, _result(before, lines[0], "2031-03-04 05:05:59 WARN ledger-api pool size changed to 2")),
    ]
    claims = build_evidence(results, "en")["claims"]
    assert [claim["claim_id"] for claim in claims] == ["claim-1", "claim-2"]
    assert "pool size changed to 2" in claims[-1]["claim_text"]
    assert "pool size changed" not in claims[0]["claim_text"]
