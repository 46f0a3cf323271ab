"""The four LLM stages over one LLMClient, and `build_llm_backend`."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from evigate.server.agents.base import (
    JSON,
    AgentBackend,
    ExecutorOutput,
    ExecutorTask,
    Skill,
    StageOutput,
    ToolCallResult,
)
from evigate.server.agents.llm import contracts
from evigate.server.agents.llm.client import ChatReply, LLMClient, LLMOutputError, ToolCallRequest
from evigate.server.agents.llm.prompt_loader import echo_phrases, load_prompt
from evigate.server.agents.llm.settings import LLMSettings
from evigate.server.deadline import Deadline

log = logging.getLogger("evigate.llm")

_BUDGET_EXHAUSTED = (
    "Tool budget exhausted: make no more tool calls. Reply now with the final executor_evidence_v2 JSON "
    "object, citing only the tool results above."
)


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


def _messages(system: str, payload: JSON) -> list[JSON]:
    return [{"role": "system", "content": system}, {"role": "user", "content": _dumps(payload)}]


class LLMPlanner:
    def __init__(self, client: LLMClient) -> None:
        self._client = client

    async def plan(
        self, query: str, language: str, skills: Sequence[Skill], deadline: Deadline
    ) -> StageOutput:
        prompt = load_prompt("planner")
        payload = {
            "query": query,
            "language": language,
            "skills": [
                {
                    "name": s.name,
                    "description": s.description,
                    "keywords": list(s.keywords),
                    "alert_names": list(s.alert_names),
                    "steps": list(s.steps),
                    "tools": list(s.tools),
                }
                for s in skills
            ],
        }
        data, _ = await self._client.chat_json(
            "planner",
            _messages(prompt.text, payload),
            deadline,
            schema_name="planner_plan",
            schema=contracts.PLANNER_SCHEMA,
        )
        plan = contracts.planner_plan(data, {s.name for s in skills})
        return StageOutput(data=plan, prompt_version=prompt.version)


class LLMExecutor:
    """A tool-calling loop: at most `max_tool_steps` tool calls per round, then the model's final text."""

    def __init__(self, client: LLMClient) -> None:
        self._client = client

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        prompt = load_prompt("executor")
        payload: JSON = {
            "query": task.query,
            "language": task.language,
            "plan": task.plan,
            "round": task.round,
        }
        if task.retry_context is not None:
            payload["retry_context"] = task.retry_context
        messages = _messages(prompt.text, {"task": payload})
        schemas = task.tools.schemas()
        budget = self._client.settings.max_tool_steps
        results: list[ToolCallResult] = []
        used = 0
        while True:
            # once the budget is spent the tools stay declared (the history holds tool calls) but unusable
            reply = await self._client.chat(
                "executor",
                messages,
                task.deadline,
                tools=schemas,
                tool_choice="none" if used >= budget else None,
            )
            if not reply.tool_calls:
                return ExecutorOutput(
                    raw_text=reply.content or "", prompt_version=prompt.version, tool_calls=tuple(results)
                )
            if used >= budget:
                # the model ignored the exhausted budget: its text (if any) is all we get
                return ExecutorOutput(
                    raw_text=reply.content or "", prompt_version=prompt.version, tool_calls=tuple(results)
                )
            messages.append(_assistant_message(reply))
            for call in reply.tool_calls:
                if used >= budget:
                    content: JSON = {"error": "tool budget exhausted; this call was not executed"}
                else:
                    used += 1
                    content = await self._run(call, task, results)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": _dumps(content)})
            if used >= budget:
                messages.append({"role": "user", "content": _BUDGET_EXHAUSTED})

    async def _run(self, call: ToolCallRequest, task: ExecutorTask, results: list[ToolCallResult]) -> JSON:
        # unknown tool names go to the ToolBox too: it records them as failed calls, so the trace
        # shows what the model tried; only unparseable arguments never become a call
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            return {"error": f"arguments are not valid JSON: {exc.msg}"}
        if not isinstance(arguments, dict):
            return {"error": "arguments must be a JSON object"}
        result = await task.tools.call(call.name, arguments, task.deadline)
        results.append(result)
        log.info(
            "llm.executor.tool round=%d tool=%s invocation_id=%d status=%s",
            task.round,
            result.tool_name,
            result.invocation_id,
            result.status,
        )
        return tool_result_message(result)


def tool_result_message(result: ToolCallResult) -> JSON:
    """What the model sees of one tool call: enough to cite it exactly."""
    details = result.retrieval_details
    message: JSON = {
        "source_invocation_id": result.invocation_id,
        "tool_name": result.tool_name,
        "arguments": result.arguments,
        "status": result.status,
        "evidence_status": details.get("evidence_status"),
        "match_level": details.get("match_level"),
        "evidence_refs": details.get("evidence_refs") or [],
    }
    if result.error:
        message["error"] = result.error
    if "deduped_from" in details:
        message["deduped_from"] = details["deduped_from"]
    return message


def _assistant_message(reply: ChatReply) -> JSON:
    return {
        "role": "assistant",
        "content": reply.content,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ],
    }


class LLMVerifier:
    def __init__(self, client: LLMClient) -> None:
        self._client = client

    async def verify(self, verifier_input: JSON, deadline: Deadline) -> StageOutput:
        prompt = load_prompt("verifier")
        data, _ = await self._client.chat_json(
            "verifier",
            _messages(prompt.text, verifier_input),
            deadline,
            schema_name="verdict",
            schema=contracts.VERIFIER_SCHEMA,
        )
        return StageOutput(data=contracts.verdict(data), prompt_version=prompt.version)


class LLMComposer:
    def __init__(self, client: LLMClient) -> None:
        self._client = client

    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        prompt = load_prompt("composer")
        data, _ = await self._client.chat_json(
            "composer",
            _messages(prompt.text, composer_input),
            deadline,
            schema_name="composer_output",
            schema=contracts.COMPOSER_SCHEMA,
        )
        return StageOutput(data=contracts.composer_output(data), prompt_version=prompt.version)


def build_llm_backend(settings: LLMSettings, *, client: LLMClient | None = None) -> AgentBackend:
    """The llm backend. `backend.aclose()` closes the client it created; a `client` passed in stays
    the caller's to close (`await client.aclose()`)."""
    owned = client is None
    client = client or LLMClient(settings)
    return AgentBackend(
        name="llm",
        planner=LLMPlanner(client),
        executor=LLMExecutor(client),
        verifier=LLMVerifier(client),
        composer=LLMComposer(client),
        closer=client.aclose if owned else None,
        composer_phrases=echo_phrases(load_prompt("composer")),
    )


__all__ = [
    "LLMComposer",
    "LLMExecutor",
    "LLMOutputError",
    "LLMPlanner",
    "LLMVerifier",
    "build_llm_backend",
    "tool_result_message",
]
