"""The LLM plan anchored on the calls code reads off the question, and the executor's example
built from one ref of each call (server.agents.llm.anchor, server.agents.llm.executor)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from evigate.server.agents.base import ExecutorTask
from evigate.server.agents.llm import LLMClient, LLMExecutor, LLMPlanner
from evigate.server.agents.llm.anchor import CALLS_FROM_CODE, anchored_calls, widens
from evigate.server.agents.llm.executor import MAX_LISTED_REFS
from evigate.server.agents.offline import OfflinePlanner
from evigate.server.deadline import Deadline
from evigate.server.tools.calls import ToolCallResult
from tests.agents.llm.conftest import FakeToolBox
from tests.support.fake_openai import FakeOpenAI, RecordedRequest, Reply, json_reply

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


async def test_the_model_sees_the_code_calls_and_the_plan_starts_with_them(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script([_plan([WIDENED, EXTRA])])
    out = await LLMPlanner(client, OfflinePlanner()).plan(QUERY, "zh", [], Deadline.after(5))
    payload = json.loads(fake.requests[0].messages[1]["content"])
    assert payload["calls_code_runs"] == [CODE_CALL]
    assert out.data["tool_calls"] == [CODE_CALL, EXTRA]
    assert [n.kind for n in out.notes] == [CALLS_FROM_CODE]


async def test_without_anchor_the_model_s_calls_are_the_plan(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([_plan([WIDENED])])
    out = await LLMPlanner(client).plan(QUERY, "zh", [], Deadline.after(5))
    assert "calls_code_runs" not in json.loads(fake.requests[0].messages[1]["content"])
    assert out.data["tool_calls"] == [WIDENED]
    assert not out.notes


async def test_a_question_code_reads_nothing_off_keeps_the_model_s_calls(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script([_plan([EXTRA])])
    out = await LLMPlanner(client, OfflinePlanner()).plan("什么情况？", "zh", [], Deadline.after(5))
    assert out.data["tool_calls"] == [EXTRA]
    assert out.notes[0].detail.startswith("0 call(s) read off the question by code; the model added 1")


async def test_the_example_holds_one_claim_per_call_in_the_order_they_ran(
    client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox
) -> None:
    examples: list[JSON] = []

    def copy(request: RecordedRequest) -> Reply:
        listing = json.loads(request.messages[-1]["content"])
        examples.append(listing["example_output"])
        return json_reply(listing["example_output"])

    fake.script([copy])
    plan = {"tool_calls": [EXTRA, CODE_CALL, CODE_CALL]}
    task = ExecutorTask(
        query=QUERY,
        language="zh",
        plan=plan,
        round=1,
        retry_context=None,
        tools=toolbox,
        deadline=Deadline.after(5),
    )
    await LLMExecutor(client).execute(task)
    [example] = examples
    claims = example["claims"]
    assert isinstance(claims, list)
    # the log call's no-evidence ref first, then the alert call's (one claim per invocation, at most 2)
    assert [c["claim_type"] for c in claims] == ["negative_observation", "observation"]
    ids = [c["evidence_bindings"][0]["source_invocation_id"] for c in claims]
    assert ids == [517, 518]


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
    fake.script([lambda request: json_reply(json.loads(request.messages[-1]["content"])["example_output"])])
    task = ExecutorTask(
        query=QUERY,
        language="zh",
        plan={"tool_calls": [EXTRA]},
        round=1,
        retry_context=None,
        tools=_ManyLines(),
        deadline=Deadline.after(5),
    )
    await LLMExecutor(client).execute(task)
    listing = json.loads(fake.requests[0].messages[-1]["content"])
    [summary] = listing["tool_results_of_this_session"]
    assert summary["ref_count"] == 12 and "evidence_refs" not in summary
    assert [r["raw_path"] for r in listing["citable_refs"]] == [
        f"$.logs[{i}]" for i in range(MAX_LISTED_REFS)
    ]
    # the ref once; the example claim quotes it in its text and its excerpt
    assert fake.requests[0].text().count("line 0 of <log>") == 3


async def test_the_example_quotes_knowledge_only_when_nothing_else_ran(
    client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox
) -> None:
    examples: list[JSON] = []

    def copy(request: RecordedRequest) -> Reply:
        examples.append(json.loads(request.messages[-1]["content"])["example_output"])
        return json_reply(examples[-1])

    knowledge = {"tool_name": "lookup_knowledge", "arguments": {"query": "<topic>"}}
    for calls in ([knowledge, CODE_CALL], [knowledge]):
        fake.script([copy])
        task = ExecutorTask(
            query=QUERY,
            language="zh",
            plan={"tool_calls": calls},
            round=1,
            retry_context=None,
            tools=toolbox,
            deadline=Deadline.after(5),
        )
        await LLMExecutor(client).execute(task)
    tools = [[c["evidence_bindings"][0]["tool_name"] for c in e["claims"]] for e in examples]
    assert tools == [["query_metrics"], ["lookup_knowledge"]]
