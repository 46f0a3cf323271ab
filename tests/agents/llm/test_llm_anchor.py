"""Code first: the LLM plan anchored on the calls code reads off the question, the model asked only
where code's plan or evidence has a gap, and the listing it writes claims from (server.agents.llm
anchor, routing and executor)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from evigate.server.agents.base import BY_CODE, ExecutorTask, StageOutput
from evigate.server.agents.llm import LLMClient, LLMExecutor, LLMPlanner
from evigate.server.agents.llm.anchor import CALLS_FROM_CODE, anchored_calls, widens
from evigate.server.agents.llm.budget import shared_tools
from evigate.server.agents.llm.executor import MAX_LISTED_REFS
from evigate.server.agents.offline import OfflineExecutor, OfflinePlanner
from evigate.server.deadline import Deadline
from evigate.server.tools.calls import ToolCallResult
from tests.agents.llm.conftest import ALERT, FakeToolBox
from tests.support.fake_openai import FakeOpenAI, Reply, json_reply

# a world none of the bundled data holds: what code reads off it is read, not remembered
QUERY = "ledger-api 现在有 DiskAlmostFull 告警吗？"
JSON = dict[str, Any]
CODE_CALL: JSON = {
    "tool_name": "query_metrics",
    "arguments": {"service": "ledger-api", "alert_name": "DiskAlmostFull"},
}
WIDENED: JSON = {"tool_name": "query_metrics", "arguments": {"alert_name": "DiskAlmostFull"}}
EXTRA: JSON = {"tool_name": "query_logs", "arguments": {"service": "ledger-api", "level": "ERROR"}}


def _plan(calls: list[JSON]) -> Reply:
    return json_reply(
        {"selected_skill": None, "selection_reason": "r", "plan": ["p"], "reasoning": "", "tool_calls": calls}
    )


def test_code_calls_come_first_and_a_loosened_repeat_is_left_out() -> None:
    calls, note = anchored_calls([CODE_CALL], [WIDENED, CODE_CALL, EXTRA], limit=4)
    assert calls == [CODE_CALL, EXTRA]
    assert note.kind == CALLS_FROM_CODE
    assert note.detail == (
        "1 call(s) read off the question by code; the model added 1; "
        "1 call(s) that only loosened a code call left out"
    )


def test_widening_is_a_strict_subset_of_one_code_call_s_parameters() -> None:
    assert widens(WIDENED, [CODE_CALL])
    assert not widens(CODE_CALL, [CODE_CALL])  # the same parameters: a repeat, not a widening
    narrower = {"tool_name": "query_metrics", "arguments": {**CODE_CALL["arguments"], "state": "firing"}}
    assert not widens(narrower, [CODE_CALL])
    assert not widens({"tool_name": "query_logs", "arguments": {}}, [CODE_CALL])  # another tool


def test_the_limit_cuts_the_model_s_calls_never_the_code_s() -> None:
    code = [CODE_CALL, EXTRA]
    model = [{"tool_name": "lookup_knowledge", "arguments": {"query": f"q{i}"}} for i in range(3)]
    calls, note = anchored_calls(code, model, limit=3)
    assert calls == [*code, model[0]]
    assert "the model added 1" in note.detail
    assert anchored_calls(code, model, limit=1)[0] == code


async def test_a_plan_code_reads_whole_is_code_s_and_the_model_is_not_asked(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    out = await LLMPlanner(client, OfflinePlanner()).plan(QUERY, "zh", [], Deadline.after(5))
    assert fake.requests == []
    assert out.data["tool_calls"] == [CODE_CALL]
    assert out.prompt_version == "offline-planner-v1"
    assert [n.kind for n in out.notes] == [BY_CODE]


class _Unresolved:
    """A planner that, like the offline one over a catalog, cannot resolve the question's service."""

    async def plan(self, query: str, language: str, skills: Any, deadline: Deadline) -> StageOutput:
        calls = [{"tool_name": "list_services", "arguments": {"name": "ledger"}}, CODE_CALL]
        return StageOutput({"tool_calls": calls}, "offline-planner-v1")


async def test_where_code_cannot_resolve_a_name_the_model_sees_its_calls_and_adds_to_them(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script([_plan([WIDENED, EXTRA])])
    out = await LLMPlanner(client, _Unresolved()).plan(QUERY, "zh", [], Deadline.after(5))
    payload = json.loads(fake.requests[0].messages[3]["content"])
    assert payload["calls_code_runs"][1] == CODE_CALL
    assert out.data["tool_calls"][1:] == [CODE_CALL, EXTRA]
    assert [n.kind for n in out.notes] == [CALLS_FROM_CODE]


async def test_without_anchor_the_model_s_calls_are_the_plan(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([_plan([WIDENED])])
    out = await LLMPlanner(client).plan(QUERY, "zh", [], Deadline.after(5))
    assert "calls_code_runs" not in json.loads(fake.requests[0].messages[3]["content"])
    assert out.data["tool_calls"] == [WIDENED]
    assert not out.notes


async def test_a_question_code_reads_nothing_off_keeps_the_model_s_calls(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script([_plan([EXTRA])])
    out = await LLMPlanner(client, OfflinePlanner()).plan("什么情况？", "zh", [], Deadline.after(5))
    assert out.data["tool_calls"] == [EXTRA]
    assert out.notes[0].detail.startswith("0 call(s) read off the question by code; the model added 1")


def _task(toolbox: Any, calls: list[JSON]) -> ExecutorTask:
    return ExecutorTask(
        query=QUERY,
        language="zh",
        plan={"tool_calls": calls},
        round=1,
        retry_context=None,
        tools=toolbox,
        deadline=Deadline.after(5),
    )


async def test_evidence_every_planned_call_found_is_quoted_by_code_without_the_model(
    client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox
) -> None:
    out = await LLMExecutor(client, OfflineExecutor()).execute(_task(toolbox, [CODE_CALL]))
    assert fake.requests == []
    assert [n.kind for n in out.notes][-1] == BY_CODE
    [claim] = json.loads(out.raw_text)["claims"]
    assert claim["evidence_bindings"][0]["tool_name"] == "query_metrics"


async def test_where_no_planned_call_found_evidence_the_model_writes_the_claims(
    client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox
) -> None:
    # asked for calls first, the model adds none; then it writes the claims (and may call tools
    # the request for calls does not offer, list_services among them)
    fake.script([_plan([]), json_reply({"answer_version": "executor_evidence_v2", "claims": []})])
    out = await LLMExecutor(client, OfflineExecutor()).execute(_task(toolbox, [EXTRA]))
    assert out.notes[0].kind == "model_asked" and "query_logs" in out.notes[0].detail
    assert out.notes[1].detail == "the model added 0 call(s)"
    assert BY_CODE not in [n.kind for n in out.notes]
    # every tool is declared (the block every stage shares); the task names the plan's, then
    # lookup_knowledge (this box has no list_services), not query_metrics
    told = json.loads(fake.requests[1].messages[3]["content"])["task"]["tools"]
    assert told == ["query_logs", "lookup_knowledge"]
    assert fake.requests[1].tools == shared_tools() and not fake.requests[0].tools  # the follow-up's is short


async def test_the_listing_ranks_the_refs_with_evidence_first_and_holds_no_claim_to_copy(
    client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox
) -> None:
    fake.script([json_reply({"answer_version": "executor_evidence_v2", "claims": []})])
    await LLMExecutor(client).execute(_task(toolbox, [EXTRA, CODE_CALL]))
    listing = json.loads(fake.requests[0].messages[-1]["content"])
    assert [r["raw_path"] for r in listing["citable_refs"]] == ["$.alerts[0]", "$.no_evidence"]
    assert "example_output" not in listing and fake.requests[0].text().count(ALERT) == 1


class _ManyLines(FakeToolBox):
    """A log query that returns twelve lines."""

    async def call(self, tool_name: str, arguments: Mapping[str, Any], deadline: Deadline) -> ToolCallResult:
        result = await super().call(tool_name, arguments, deadline)
        refs = [{"raw_path": f"$.logs[{i}]", "text": f"line {i} of <log>"} for i in range(12)]
        details = {"evidence_status": "supported", "match_level": "L0", "evidence_refs": refs}
        return dataclasses.replace(result, retrieval_details=details)


async def test_the_listing_holds_each_ref_text_once_and_a_few_refs_per_call(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script([json_reply({"answer_version": "executor_evidence_v2", "claims": []})])
    await LLMExecutor(client).execute(_task(_ManyLines(), [EXTRA]))
    listing = json.loads(fake.requests[0].messages[-1]["content"])
    [summary] = listing["tool_results_of_this_session"]
    assert summary["ref_count"] == 12 and "evidence_refs" not in summary
    assert [r["raw_path"] for r in listing["citable_refs"]] == [
        f"$.logs[{i}]" for i in range(MAX_LISTED_REFS)
    ]
    assert fake.requests[0].text().count("line 0 of <log>") == 1
