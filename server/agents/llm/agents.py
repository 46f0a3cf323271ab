"""The four LLM stages over one LLMClient, and `build_llm_backend`. The Executor, evidence first,
is server.agents.llm.executor; the Composer, sentence by sentence, server.agents.llm.composer."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from evigate.server.agents.base import JSON, AgentBackend, Planner, Skill, StageNote, StageOutput
from evigate.server.agents.llm import contracts
from evigate.server.agents.llm.anchor import anchored_calls
from evigate.server.agents.llm.client import ChatReply, LLMClient, LLMOutputError
from evigate.server.agents.llm.composer import LLMComposer, echo_lines
from evigate.server.agents.llm.executor import LLMExecutor, tool_result_message
from evigate.server.agents.llm.llm_settings import LLMSettings
from evigate.server.agents.llm.prompt_loader import echo_phrases, load_prompt
from evigate.server.agents.offline.composer import OfflineComposer
from evigate.server.deadline import Deadline
from evigate.server.tools.registry import default_registry


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


def _messages(system: str, payload: JSON) -> list[JSON]:
    return [{"role": "system", "content": system}, {"role": "user", "content": _dumps(payload)}]


def _notes(reply: ChatReply) -> tuple[StageNote, ...]:
    return tuple(StageNote(note) for note in reply.notes)


class LLMPlanner:
    """Chooses a skill and names the tool calls (tool, arguments) that code runs first. With an
    `anchor` (the offline planner), the calls it reads off the question come first and the model
    adds to them (server.agents.llm.anchor)."""

    def __init__(self, client: LLMClient, anchor: Planner | None = None) -> None:
        self._client = client
        self._anchor = anchor

    async def plan(
        self, query: str, language: str, skills: Sequence[Skill], deadline: Deadline
    ) -> StageOutput:
        prompt = load_prompt("planner")
        registry = default_registry()
        code_calls: list[JSON] = []
        if self._anchor is not None:
            code = await self._anchor.plan(query, language, skills, deadline)
            code_calls = contracts.planned_calls(code.data.get("tool_calls"), registry.names())
        payload: JSON = {
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
            "tools": [schema["function"] for schema in registry.openai_schemas()],
        }
        if self._anchor is not None:
            payload["calls_code_runs"] = code_calls
        data, reply = await self._client.chat_json(
            "planner",
            _messages(prompt.text, payload),
            deadline,
            schema_name="planner_plan",
            schema=contracts.PLANNER_SCHEMA,
        )
        plan = contracts.planner_plan(data, {s.name for s in skills}, registry.names())
        notes = _notes(reply)
        if self._anchor is not None:
            limit = max(contracts.MAX_PLANNED_CALLS, len(code_calls))
            plan["tool_calls"], note = anchored_calls(code_calls, plan["tool_calls"], limit)
            notes = (*notes, note)
        return StageOutput(data=plan, prompt_version=prompt.version, notes=notes)


class LLMVerifier:
    def __init__(self, client: LLMClient) -> None:
        self._client = client

    async def verify(self, verifier_input: JSON, deadline: Deadline) -> StageOutput:
        prompt = load_prompt("verifier")
        data, reply = await self._client.chat_json(
            "verifier",
            _messages(prompt.text, verifier_input),
            deadline,
            schema_name="verdict",
            schema=contracts.VERIFIER_SCHEMA,
        )
        return StageOutput(data=contracts.verdict(data), prompt_version=prompt.version, notes=_notes(reply))


def build_llm_backend(
    settings: LLMSettings, *, client: LLMClient | None = None, anchor: Planner | None = None
) -> AgentBackend:
    """The llm backend; `anchor` is the planner whose calls the LLM plan starts with. Its
    `backend.aclose()` closes the client it created; a `client` passed in stays the caller's to
    close (`await client.aclose()`)."""
    owned = client is None
    client = client or LLMClient(settings)
    return AgentBackend(
        name="llm",
        planner=LLMPlanner(client, anchor),
        executor=LLMExecutor(client),
        verifier=LLMVerifier(client),
        composer=LLMComposer(client),
        fallback_composer=OfflineComposer(),
        closer=client.aclose if owned else None,
        composer_phrases=(*echo_phrases(load_prompt("composer")), *echo_lines()),
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
