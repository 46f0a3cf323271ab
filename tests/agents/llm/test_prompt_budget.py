"""Each stage's own instructions stay within the prompt budget, after a shared prefix (the preamble
and the tools block) that every request of every stage starts with (server.agents.llm.budget).
Counts are an upper estimate of a BPE tokenizer's."""

from __future__ import annotations

import pytest

from evigate.server.agents.llm.budget import (
    INSTRUCTION_BUDGET,
    PREAMBLE,
    dumps,
    estimate_tokens,
    shared_tools,
    stage_messages,
)
from evigate.server.agents.llm.executor import offered_tools
from evigate.server.agents.llm.llm_settings import Stage
from evigate.server.agents.llm.prompt_loader import Extra, load_prompt
from evigate.server.tools.registry import default_registry

REGISTRY = default_registry()
SHARED_BUDGET = 1100


def shared() -> str:
    """What every request of every stage starts with: the preamble and the tools block."""
    return PREAMBLE + dumps(shared_tools())


@pytest.mark.parametrize("stage", ["planner", "followup", "executor", "verifier", "composer", "evaluator"])
def test_each_stage_s_instructions_fit_the_budget(stage: Stage | Extra) -> None:
    own = estimate_tokens(load_prompt(stage).text)
    print(f"{stage}: about {own} tokens of its own instructions, after {estimate_tokens(shared())} shared")
    assert own < INSTRUCTION_BUDGET


def test_the_shared_prefix_is_small_and_declares_every_tool_compactly() -> None:
    # read once while a server keeps its cache, but read: every registered tool, short schemas
    assert estimate_tokens(shared()) < SHARED_BUDGET
    names = [tool["function"]["name"] for tool in shared_tools()]
    assert names == list(REGISTRY.names())
    for tool in shared_tools():
        assert "limit" not in tool["function"]["parameters"]["properties"]


def test_the_estimate_is_not_below_a_plain_count() -> None:
    # one token per word or symbol is what a BPE tokenizer needs at least for such text
    assert estimate_tokens("service=payment-service, current=92%") >= 8
    assert estimate_tokens("当前查询未检索到") == 8


def test_the_executor_is_told_the_plan_s_tools_and_two_more() -> None:
    plan = {"tool_calls": [{"tool_name": "query_promql", "arguments": {}}]}
    assert offered_tools(plan) == ["query_promql", "list_services", "lookup_knowledge"]
    assert offered_tools({}) == ["query_metrics", "query_logs", "list_services", "lookup_knowledge"]
    some = [{"function": {"name": "query_logs"}}, {"function": {"name": "lookup_knowledge"}}]
    assert offered_tools({}, some) == ["query_logs", "lookup_knowledge"]


def test_every_request_shares_the_preamble_and_a_stage_s_requests_its_instructions() -> None:
    planner = stage_messages(load_prompt("planner").text, "q?", {"a": 1})
    verifier = stage_messages(load_prompt("verifier").text, "q?", {"b": 2})
    assert planner[:1] == verifier[:1]
    assert planner[1] != verifier[1]
    other_question = stage_messages(load_prompt("planner").text, "another q?", {"c": 3})
    assert planner[:2] == other_question[:2]
    assert planner[2] != other_question[2]  # the question comes after the instructions
