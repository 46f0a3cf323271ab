"""Code first, where code's evidence ranks low against the question: the question's own log term
found nothing, or no discovered metric matched its words, while another call found something.
The model is asked for calls beyond code's (a term as the logs write it, a metric chosen among the
names discovery found), code runs them and quotes what they find beside its own claims; what the
model adds never replaces what code had (server.agents.llm.follow_up)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from evigate.server.agents.base import BY_CODE, ExecutorTask
from evigate.server.agents.llm import LLMClient, LLMExecutor
from evigate.server.agents.llm.anchor import widens
from evigate.server.agents.llm.follow_up import MODEL_UNUSED
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.agents.llm.routing import low_evidence
from evigate.server.agents.offline import OfflineExecutor
from evigate.server.deadline import Deadline
from evigate.server.tools.calls import ToolCallResult
from tests.agents.llm.conftest import FakeToolBox
from tests.support.fake_openai import FakeOpenAI, json_reply, reply

JSON = dict[str, Any]
# a world none of the bundled data holds
QUERY = "Does ledger-api have a DiskAlmostFull alert, and is there a Python traceback in its logs?"
ALERT_CALL: JSON = {
    "tool_name": "query_metrics",
    "arguments": {"service": "ledger-api", "alert_name": "DiskAlmostFull"},
}
TERM_CALL: JSON = {
    "tool_name": "query_logs",
    "arguments": {"service": "ledger-api", "keyword": "Python traceback"},
}
FOUND_LINE = "2026-11-20 11:02:03 ERROR ledger.api Traceback (most recent call last): ReadTimeout"
UNRELATED_LINE = "2026-11-20 09:10:44 INFO ledger.api config: loaded 14 routes"
DISCOVERED = ["ledger_sync_lag_seconds", "ledger_http_requests_total"]


def _result(
    tool: str, arguments: JSON, status: str, refs: list[JSON], raw: JSON | None = None
) -> ToolCallResult:
    return ToolCallResult(
        invocation_id=1,
        tool_name=tool,
        arguments=arguments,
        status="success",
        error=None,
        raw_result=raw or {},
        retrieval_details={"evidence_status": status, "match_level": "L0", "evidence_refs": refs},
    )


NONE_REF = [{"raw_path": "$.no_evidence", "text": "no evidence"}]


def test_evidence_ranks_low_when_the_question_s_own_term_or_metric_found_nothing() -> None:
    alert = _result(
        "query_metrics", ALERT_CALL["arguments"], "supported", [{"raw_path": "$.alerts[0]", "text": "a"}]
    )
    term = _result("query_logs", TERM_CALL["arguments"], "no_evidence", NONE_REF)
    about = _result(
        "query_promql",
        {"service": "ledger-api", "about": "how stale is it"},
        "no_evidence",
        NONE_REF,
        {"discovered": DISCOVERED, "series": []},
    )
    level = _result("query_logs", {"service": "ledger-api", "level": "ERROR"}, "no_evidence", NONE_REF)
    assert low_evidence([alert, level]) is None  # a survey's check that found nothing is an answer
    pattern = _result("query_logs", {"service": "db", "pattern": "(?i)client[a-z]*"}, "no_evidence", NONE_REF)
    assert "client" in (low_evidence([alert, pattern]) or "")
    assert "Python traceback" in (low_evidence([alert, term]) or "")
    assert "ledger-api" in (low_evidence([alert, about]) or "")
    found = _result(
        "query_logs", TERM_CALL["arguments"], "supported", [{"raw_path": "$.logs[0]", "text": "x"}]
    )
    assert low_evidence([alert, found]) is None


def test_another_term_with_a_filter_dropped_is_a_new_query_not_a_loosened_one() -> None:
    code = {"tool_name": "query_logs", "arguments": {"service": "db", "keyword": "clients", "level": "ERROR"}}
    assert widens({"tool_name": "query_logs", "arguments": {"service": "db", "keyword": "clients"}}, [code])
    other = {"tool_name": "query_logs", "arguments": {"service": "db", "keyword": "too many clients"}}
    assert not widens(other, [code])


class _Box(FakeToolBox):
    """query_metrics finds the alert; query_logs finds the traceback only under the keyword
    "Traceback", and any other ranked search ranks an unrelated line first; query_promql with
    `about` discovers metrics and matches none of the question."""

    def schemas(self) -> list[JSON]:
        names = ("query_metrics", "query_logs", "query_promql", "lookup_knowledge")
        return [
            {"type": "function", "function": {"name": n, "description": n, "parameters": {}}} for n in names
        ]

    async def call(self, tool_name: str, arguments: Mapping[str, Any], deadline: Deadline) -> ToolCallResult:
        result = await super().call(tool_name, arguments, deadline)
        if tool_name == "query_logs" and "Traceback" in (arguments.get("keyword"), arguments.get("query")):
            details = {
                "evidence_status": "supported",
                "match_level": "L0",
                "evidence_refs": [{"raw_path": "$.logs[0]", "text": FOUND_LINE}],
            }
            return ToolCallResult(**{**result.__dict__, "retrieval_details": details})
        if tool_name == "query_logs" and arguments.get("query"):
            details = {
                "evidence_status": "supported",
                "match_level": "L0",
                "evidence_refs": [{"raw_path": "$.logs[0]", "text": UNRELATED_LINE}],
            }
            return ToolCallResult(**{**result.__dict__, "retrieval_details": details})
        if tool_name == "query_promql":
            details = {"evidence_status": "no_evidence", "match_level": "none", "evidence_refs": NONE_REF}
            raw = {"discovered": DISCOVERED, "series": []}
            return ToolCallResult(
                **{
                    **result.__dict__,
                    "status": "success",
                    "error": None,
                    "raw_result": raw,
                    "retrieval_details": details,
                }
            )
        return result


def _task(box: FakeToolBox, calls: list[JSON], query: str = QUERY) -> ExecutorTask:
    return ExecutorTask(
        query=query,
        language="en",
        plan={"tool_calls": calls},
        round=1,
        retry_context=None,
        tools=box,
        deadline=Deadline.after(10),
    )


def _calls(*calls: JSON) -> Any:
    return json_reply({"tool_calls": list(calls)})


async def test_the_model_s_term_is_run_and_code_quotes_what_it_found(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    box = _Box()
    fake.script(
        [_calls({"tool_name": "query_logs", "arguments": {"service": "ledger-api", "keyword": "Traceback"}})]
    )
    out = await LLMExecutor(client, OfflineExecutor()).execute(_task(box, [ALERT_CALL, TERM_CALL]))

    [request] = fake.requests
    assert request.model == "test-model"  # the planner's model: adding calls is planning
    assert request.messages[0]["content"] == load_prompt("followup").text  # its own short prompt
    assert "Python traceback" in request.text()  # what found nothing is shown with why it was asked
    assert ("query_logs", {"service": "ledger-api", "keyword": "Traceback"}) in [
        (t, a) for t, a, _ in box.calls
    ]
    data = json.loads(out.raw_text)
    quoted = [b["evidence_excerpt"] for c in data["claims"] for b in c["evidence_bindings"]]
    assert any("Traceback (most recent call last)" in q for q in quoted), data
    assert any("DiskAlmostFull" in q or "HighCPUUsage" in q for q in quoted)  # code's own claim stays
    kinds = [n.kind for n in out.notes]
    assert {"model_asked", "model_added_calls", "model_calls_quoted"} <= set(kinds) and kinds[-1] == BY_CODE
    assert any(r.arguments.get("keyword") == "Traceback" for r in out.tool_calls)


async def test_the_model_chooses_among_the_discovered_metrics_and_no_other(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    box = _Box()
    about = {
        "tool_name": "query_promql",
        "arguments": {"service": "ledger-api", "about": "how far behind is it"},
    }
    fake.script(
        [
            _calls(
                {
                    "tool_name": "query_promql",
                    "arguments": {"service": "ledger-api", "about": "ledger_sync_lag_seconds"},
                },
                {"tool_name": "query_promql", "arguments": {"query": "rate(made_up_metric_total[5m])"}},
            )
        ]
    )
    out = await LLMExecutor(client, OfflineExecutor()).execute(_task(box, [ALERT_CALL, about]))
    assert "ledger_sync_lag_seconds" in fake.requests[0].text()  # the names discovery found are offered
    ran = [a for t, a, _ in box.calls if t == "query_promql"]
    assert {"service": "ledger-api", "about": "ledger_sync_lag_seconds"} in ran
    assert not [a for a in ran if "made_up_metric_total" in str(a)]
    [added] = [n for n in out.notes if n.kind == "model_added_calls"]
    assert "1 not among the discovered metrics left out" in added.detail


async def test_a_follow_up_the_model_cannot_answer_leaves_code_s_claims_as_they_were(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script([reply("Monitoring is a journey rather than a destination.")])
    with_model = await LLMExecutor(client, OfflineExecutor()).execute(_task(_Box(), [ALERT_CALL, TERM_CALL]))
    alone = await OfflineExecutor().execute(_task(_Box(), [ALERT_CALL, TERM_CALL]))

    def said(raw: str) -> list[tuple[str, str]]:  # invocation ids differ: the fake box counts on
        return [(c["claim_type"], c["claim_text"]) for c in json.loads(raw)["claims"]]

    assert said(with_model.raw_text) == said(alone.raw_text)
    [fell] = [n for n in with_model.notes if n.kind == MODEL_UNUSED]
    assert fell.detail.startswith("unusable_output")


async def test_words_a_log_line_prints_become_the_term_search_with_code_s_service_and_filters(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    box = _Box()
    term = {
        "tool_name": "query_logs",
        "arguments": {"service": "ledger-api", "keyword": "Python 报错", "level": "ERROR"},
    }
    fake.script([json_reply({"log_words": ["Traceback", " ", "Python 报错", "Ledger-API"], "metric": ""})])
    out = await LLMExecutor(client, OfflineExecutor()).execute(_task(box, [ALERT_CALL, term]))

    [request] = fake.requests
    assert not request.tools and request.messages[0]["content"] == load_prompt("followup").text
    assert request.messages[-1]["content"] == QUERY  # the question alone, not what code's calls found
    logs = [a for t, a, _ in box.calls if t == "query_logs"]
    assert {"service": "ledger-api", "query": "Traceback", "level": "ERROR"} in logs
    assert not [
        a for a in logs if "query" in a and a["query"] != "Traceback"
    ]  # a word tried, blank, the service
    quoted = [
        b["evidence_excerpt"] for c in json.loads(out.raw_text)["claims"] for b in c["evidence_bindings"]
    ]
    assert any("Traceback (most recent call last)" in q for q in quoted)


async def test_the_metric_named_is_queried_for_the_service_only_when_discovery_found_it(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    about = {
        "tool_name": "query_promql",
        "arguments": {"service": "ledger-api", "about": "how far behind is it"},
    }
    for metric, expected in (("ledger_sync_lag_seconds", True), ("made_up_lag_seconds", False)):
        box = _Box()
        fake.script([json_reply({"log_words": [], "metric": metric})])
        await LLMExecutor(client, OfflineExecutor()).execute(_task(box, [ALERT_CALL, about]))
        ran = [a for t, a, _ in box.calls if t == "query_promql"]
        assert ({"service": "ledger-api", "about": metric} in ran) is expected, metric


async def test_a_ranked_search_whose_lines_hold_few_of_the_model_s_words_found_nothing(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    box = _Box()
    fake.script([json_reply({"log_words": ["renew the ledger TLS certificate"], "metric": ""})])
    out = await LLMExecutor(client, OfflineExecutor()).execute(_task(box, [ALERT_CALL, TERM_CALL]))

    assert {"service": "ledger-api", "query": "renew the ledger TLS certificate"} in [
        a for t, a, _ in box.calls if t == "query_logs"
    ]
    quoted = [
        b["evidence_excerpt"] for c in json.loads(out.raw_text)["claims"] for b in c["evidence_bindings"]
    ]
    assert not any("loaded 14 routes" in q for q in quoted)  # ranked first, but holds one word of four
    assert "model_calls_quoted" not in [n.kind for n in out.notes]
