"""Each stage's instructions stay within the prompt budget, and every stage's messages start alike
(server.agents.llm.budget). Counts are an upper estimate of a BPE tokenizer's."""

from __future__ import annotations

import json

import pytest

from evigate.server.agents.llm.budget import (
    INSTRUCTION_BUDGET,
    PREAMBLE,
    compact_schemas,
    estimate_tokens,
    stage_messages,
    tool_summary,
)
from evigate.server.agents.llm.executor import offered_tools
from evigate.server.agents.llm.llm_settings import Stage
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.tools.registry import default_registry

REGISTRY = default_registry()


def instructions(stage: Stage) -> str:
    """What a stage is told on every turn besides its input: the preamble, its prompt and the
    tools it is offered (the Executor's widest offer: a plan of every core tool)."""
    text = PREAMBLE + load_prompt(stage).text
    if stage == "executor":
        plan: dict[str, object] = {
            "tool_calls": [{"tool_name": t, "arguments": {}} for t in ("query_metrics", "query_logs")]
        }
        text += json.dumps(compact_schemas(REGISTRY.openai_schemas(), offered_tools(plan)))
    if stage == "planner":
        text += json.dumps([tool_summary(s["function"]) for s in REGISTRY.openai_schemas()])
    return text


@pytest.mark.parametrize("stage", ["planner", "executor", "verifier", "composer", "evaluator"])
def test_each_stage_s_instructions_fit_the_budget(stage: Stage) -> None:
    tokens = estimate_tokens(instructions(stage))
    print(f"{stage}: about {tokens} tokens of instructions")
    assert tokens < INSTRUCTION_BUDGET


def test_the_estimate_is_not_below_a_plain_count() -> None:
    # one token per word or symbol is what a BPE tokenizer needs at least for such text
    assert estimate_tokens("service=payment-service, current=92%") >= 8
    assert estimate_tokens("当前查询未检索到") == 8


def test_the_executor_is_offered_the_plan_s_tools_and_two_more_only() -> None:
    plan = {"tool_calls": [{"tool_name": "query_promql", "arguments": {}}]}
    assert offered_tools(plan) == ["query_promql", "list_services", "lookup_knowledge"]
    assert offered_tools({}) == ["query_metrics", "query_logs", "list_services", "lookup_knowledge"]
    compact = compact_schemas(REGISTRY.openai_schemas(), ["query_metrics"])
    assert "limit" not in compact[0]["function"]["parameters"]["properties"]


def test_a_session_s_stages_share_their_first_messages() -> None:
    planner = stage_messages(load_prompt("planner").text, "q?", {"a": 1})
    verifier = stage_messages(load_prompt("verifier").text, "q?", {"b": 2})
    assert planner[:2] == verifier[:2]
    assert planner[2] != verifier[2]
