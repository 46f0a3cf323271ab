"""The four LLM stages against the scripted server, with a fake ToolBox."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from evigate.server.agents.base import ExecutorTask, Skill
from evigate.server.agents.llm import (
    LLMClient,
    LLMExecutor,
    LLMOutputError,
    LLMPlanner,
    LLMSettings,
    LLMVerifier,
    build_llm_backend,
)
from evigate.server.agents.llm.budget import shared_tools
from evigate.server.deadline import Deadline, DeadlineExceeded
from tests.agents.llm.conftest import ALERT, FakeToolBox
from tests.support.fake_openai import (
    FakeOpenAI,
    Hang,
    RecordedRequest,
    Reply,
    json_reply,
    reply,
    tool_call,
    tool_calls,
)

QUERY = "payment-service 现在有 HighCPUUsage 告警吗？"
PLAN = {
    "selected_skill": "diagnose-high-cpu",
    "selection_reason": "r",
    "plan": ["query_metrics"],
    "reasoning": "",
}


PLANNED_CALL = {"tool_name": "query_metrics", "arguments": {"alert_name": "<alert>"}}


def _task(
    toolbox: FakeToolBox,
    *,
    round: int = 1,
    retry_context: dict[str, Any] | None = None,
    plan: dict[str, Any] | None = None,
) -> ExecutorTask:
    return ExecutorTask(
        query=QUERY,
        language="zh",
        plan=plan or PLAN,
        round=round,
        retry_context=retry_context,
        tools=toolbox,
        deadline=Deadline.after(10),
    )


def _evidence_from(request: RecordedRequest) -> Reply:
    """A model that cites exactly what the tool result it was given says."""
    [result] = request.tool_results()
    ref = result["evidence_refs"][0]
    evidence = {
        "answer_version": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": "claim-1",
                "claim_type": "observation",
                "claim_text": "payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 92%。",
                "support_level": "direct",
                "evidence_bindings": [
                    {
                        "tool_name": result["tool_name"],
                        "source_invocation_id": result["source_invocation_id"],
                        "raw_path": ref["raw_path"],
                        "evidence_excerpt": ref["text"],
                    }
                ],
            }
        ],
        "hypotheses": [],
        "recommended_actions": [],
        "missing_info": [],
    }
    return json_reply(evidence)


# -- Executor ---------------------------------------------------------------------------------------
async def test_executor_tool_loop(client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox) -> None:
    fake.script(
        [
            tool_calls(
                tool_call("query_metrics", {"service": "payment-service", "alert_name": "HighCPUUsage"})
            ),
            _evidence_from,
        ]
    )
    out = await LLMExecutor(client).execute(_task(toolbox))

    assert out.prompt_version == "executor-v6"
    assert [(name, args) for name, args, _ in toolbox.calls] == [
        ("query_metrics", {"service": "payment-service", "alert_name": "HighCPUUsage"})
    ]
    assert toolbox.calls[0][2].at is not None  # the task's deadline reaches the tools
    assert [c.invocation_id for c in out.tool_calls] == [517]
    # the raw text is returned unparsed; here it cites the real invocation
    evidence = json.loads(out.raw_text)
    binding = evidence["claims"][0]["evidence_bindings"][0]
    assert (binding["source_invocation_id"], binding["raw_path"], binding["evidence_excerpt"]) == (
        517,
        "$.alerts[0]",
        ALERT,
    )

    first, second = fake.requests
    assert first.model == "test-executor"
    assert first.tools == shared_tools()  # the tools block every stage declares, the same bytes
    # the task names the tools that fit its plan, of those the session has
    told = json.loads(first.messages[3]["content"])["task"]["tools"]
    assert set(told) <= {"query_metrics", "query_logs", "lookup_knowledge"} and "lookup_knowledge" in told
    assert first.response_format is None  # the executor's text is parsed by the pipeline
    assert QUERY in first.text()
    assert "retry_context" not in first.messages[3]["content"]
    # the tool call and its result went back to the model
    assistant, tool = second.messages[-2], second.messages[-1]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"][0]["function"]["name"] == "query_metrics"
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert second.tool_results() == [
        {
            "source_invocation_id": 517,
            "tool_name": "query_metrics",
            "arguments": {"service": "payment-service", "alert_name": "HighCPUUsage"},
            "status": "success",
            "evidence_status": "supported",
            "match_level": "L0",
            "ref_count": 1,
            "evidence_refs": [{"raw_path": "$.alerts[0]", "text": ALERT}],
        }
    ]


async def test_executor_parallel_calls_are_all_answered(
    client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox
) -> None:
    fake.script(
        [
            tool_calls(
                tool_call("query_metrics", {"service": "payment-service"}),
                tool_call("query_logs", {"service": "inventory-service", "keyword": "HikariCP"}),
            ),
            reply("{}"),
        ]
    )
    out = await LLMExecutor(client).execute(_task(toolbox))
    assert [c.tool_name for c in out.tool_calls] == ["query_metrics", "query_logs"]
    results = fake.requests[1].tool_results()
    assert [(r["source_invocation_id"], r["evidence_status"]) for r in results] == [
        (517, "supported"),
        (518, "no_evidence"),
    ]
    assert results[1]["evidence_refs"][0]["raw_path"] == "$.no_evidence"


async def test_executor_tool_steps_are_bounded(
    fake: FakeOpenAI, settings: LLMSettings, toolbox: FakeToolBox
) -> None:
    llm = LLMClient(dataclasses.replace(settings, max_tool_steps=2))
    greedy = tool_calls(tool_call("query_logs", {"keyword": "x"}))
    fake.script(
        [
            greedy,
            tool_calls(*[tool_call("query_logs", {"keyword": str(i)}) for i in range(3)]),
            reply("final"),
        ]
    )
    try:
        out = await LLMExecutor(llm).execute(_task(toolbox))
    finally:
        await llm.aclose()
    assert out.raw_text == "final"
    assert len(toolbox.calls) == 2  # the budget, whatever the model asked for
    assert len(fake.requests) == 3
    last = fake.requests[-1]
    answers = last.tool_results()
    assert answers[-2:] == [{"error": "tool budget exhausted; this call was not executed"}] * 2
    assert last.body.get("tool_choice") == "none"
    assert "Tool budget exhausted" in last.messages[-1]["content"]


async def test_executor_stops_when_the_model_ignores_the_budget(
    fake: FakeOpenAI, settings: LLMSettings, toolbox: FakeToolBox
) -> None:
    llm = LLMClient(dataclasses.replace(settings, max_tool_steps=1))
    fake.script(
        [tool_calls(tool_call("query_logs", {})), tool_calls(tool_call("query_logs", {}), content="{")]
    )
    try:
        out = await LLMExecutor(llm).execute(_task(toolbox))
    finally:
        await llm.aclose()
    assert out.raw_text == "{"
    assert len(toolbox.calls) == 1
    assert len(fake.requests) == 2


async def test_executor_bad_calls(client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox) -> None:
    fake.script(
        [
            tool_calls(
                tool_call("drop_database", {}),
                tool_call("query_logs", "{not json"),
                tool_call("query_logs", "[1, 2]"),
            ),
            reply("done"),
            reply("done"),
        ]
    )
    out = await LLMExecutor(client).execute(_task(toolbox))
    assert out.raw_text == "done"  # after one repeat asking for the JSON object
    assert "held no JSON object" in fake.requests[2].messages[-1]["content"]
    # an unknown tool is the ToolBox's to refuse (and record); unparseable arguments never run
    assert [name for name, _, _ in toolbox.calls] == ["drop_database"]
    assert [(c.tool_name, c.status) for c in out.tool_calls] == [("drop_database", "failed")]
    results = fake.requests[1].tool_results()
    errors = [r["error"] for r in results]
    assert results[0]["status"] == "failed"
    assert results[0]["evidence_refs"] == []
    assert "unknown tool 'drop_database'" in errors[0]
    assert "not valid JSON" in errors[1]
    assert "JSON object" in errors[2]


async def test_executor_retry_round_carries_the_retry_context(
    client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox
) -> None:
    retry_context = {
        "previous_round": 1,
        "failed_rules": ["evidence.invocation_exists"],
        "failed_bindings": [],
    }
    fake.script([reply("{}")])
    planned = {**PLAN, "tool_calls": [PLANNED_CALL]}
    await LLMExecutor(client).execute(_task(toolbox, round=2, retry_context=retry_context, plan=planned))
    task = json.loads(fake.requests[0].messages[3]["content"])["task"]
    assert task["round"] == 2
    assert task["retry_context"] == retry_context


async def test_executor_respects_the_deadline(
    client: LLMClient, fake: FakeOpenAI, toolbox: FakeToolBox
) -> None:
    fake.script([tool_calls(tool_call("query_metrics", {})), Hang()])
    task = dataclasses.replace(_task(toolbox), deadline=Deadline.after(0.6))
    with pytest.raises(DeadlineExceeded):
        await LLMExecutor(client).execute(task)
    assert len(toolbox.calls) == 1


# -- Planner, Verifier, Composer --------------------------------------------------------------------
SKILLS = [
    Skill(
        name="diagnose-high-cpu",
        description="CPU alerts",
        keywords=("cpu",),
        alert_names=("HighCPUUsage",),
        steps=("query_metrics",),
        tools=("query_metrics",),
    )
]


async def test_planner(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script(
        [
            json_reply(
                {
                    "selected_skill": "diagnose-high-cpu",
                    "selection_reason": "HighCPUUsage",
                    "plan": ["query_metrics service=payment-service alert_name=HighCPUUsage"],
                    "reasoning": "narrow",
                    "tool_calls": [
                        {"tool_name": "query_metrics", "arguments": {"alert_name": "HighCPUUsage"}},
                        {"tool_name": "drop_database", "arguments": {}},
                        {"tool_name": "query_logs", "arguments": "not an object"},
                    ],
                }
            )
        ]
    )
    out = await LLMPlanner(client).plan(QUERY, "zh", SKILLS, Deadline.after(5))
    assert out.prompt_version == "planner-v7"
    assert out.data == {
        "selected_skill": "diagnose-high-cpu",
        "selection_reason": "HighCPUUsage",
        "plan": ["query_metrics service=payment-service alert_name=HighCPUUsage"],
        "reasoning": "narrow",
        # only calls of a registered tool with an arguments object are kept
        "tool_calls": [{"tool_name": "query_metrics", "arguments": {"alert_name": "HighCPUUsage"}}],
    }
    payload = json.loads(fake.requests[0].messages[3]["content"])
    # the skills by name and description; the tools are the block every stage declares, not
    # listed again, and the planner calls none of them
    assert set(payload["skills"][0]) == {"name", "description"} and "tools" not in payload
    assert fake.requests[0].tools == shared_tools()
    assert fake.requests[0].body.get("tool_choice") == "none"
    assert fake.requests[0].response_format is not None


async def test_planner_unknown_skill_becomes_null(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script(
        [json_reply({"selected_skill": "made-up", "selection_reason": "x", "plan": [], "reasoning": ""})]
    )
    out = await LLMPlanner(client).plan(QUERY, "zh", SKILLS, Deadline.after(5))
    assert out.data["selected_skill"] is None
    assert "made-up" in out.data["selection_reason"]


VERDICT = {
    "verdict": "PASS",
    "groundedness_score": 1.0,
    "critical_fact_count": 2,
    "claim_checks": [
        {"claim_id": "claim-1", "supported": True, "reason": "92% in excerpt", "unsupported_facts": []}
    ],
    "facts_checked": [{"claim_id": "claim-1", "fact": "92%", "kind": "number", "supported": True}],
    "rationale": "supported",
}


async def test_verifier(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([reply("```json\n" + json.dumps(VERDICT) + "\n```")])
    verifier_input = {
        "original_query": QUERY,
        "gatekeeper_result": {"severity": "none"},
        "retry_context": None,
    }
    out = await LLMVerifier(client).verify(verifier_input, Deadline.after(5))
    assert out.prompt_version == "verifier-v3"
    assert out.data == VERDICT
    assert json.loads(fake.requests[0].messages[3]["content"]) == verifier_input


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"verdict": "low_confid"}, "LOW_CONFID"),
        ({"verdict": "LOW-CONFIDENCE"}, "LOW_CONFID"),
        ({"verdict": "Reject", "groundedness_score": 7, "critical_fact_count": -1}, "REJECT"),
    ],
)
async def test_verifier_normalises(
    client: LLMClient, fake: FakeOpenAI, raw: dict[str, Any], expected: str
) -> None:
    fake.script([json_reply(raw)])
    out = await LLMVerifier(client).verify({}, Deadline.after(5))
    assert out.data["verdict"] == expected
    assert 0.0 <= out.data["groundedness_score"] <= 1.0
    assert out.data["critical_fact_count"] >= 0
    assert set(out.data) == set(VERDICT)


@pytest.mark.parametrize(
    "content", ["The claims look fine: PASS", '{"verdict": "MAYBE"}', '{"groundedness_score": 1}', "[1, 2]"]
)
async def test_verifier_bad_reply_raises(client: LLMClient, fake: FakeOpenAI, content: str) -> None:
    fake.script([reply(content)])
    with pytest.raises(LLMOutputError):
        await LLMVerifier(client).verify({}, Deadline.after(5))


async def test_planner_bad_reply_raises(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([reply("I'd use the CPU skill.")])
    with pytest.raises(LLMOutputError, match="no JSON object"):
        await LLMPlanner(client).plan(QUERY, "zh", SKILLS, Deadline.after(5))


async def test_build_llm_backend(settings: LLMSettings, fake: FakeOpenAI, toolbox: FakeToolBox) -> None:
    llm = LLMClient(settings)
    backend = build_llm_backend(settings, client=llm)
    assert backend.name == "llm"
    fake.script([json_reply(VERDICT), reply("{}")])
    try:
        verdict = await backend.verifier.verify({}, Deadline.after(5))
        executed = await backend.executor.execute(_task(toolbox, plan={**PLAN, "tool_calls": [PLANNED_CALL]}))
    finally:
        await llm.aclose()
    assert verdict.prompt_version == "verifier-v3"
    assert executed.prompt_version == "executor-v6"
    assert build_llm_backend(settings).planner is not None
