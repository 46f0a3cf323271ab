"""The four LLM stages over one LLMClient, and `build_llm_backend`. The Executor, evidence first,
is server.agents.llm.executor; the Composer, sentence by sentence, server.agents.llm.composer."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from evigate.rules.enums import Severity, Verdict
from evigate.server.agents.base import (
    JSON,
    AgentBackend,
    Executor,
    Planner,
    Skill,
    StageNote,
    StageOutput,
    Verifier,
)
from evigate.server.agents.llm import contracts, routing
from evigate.server.agents.llm.anchor import anchored_calls
from evigate.server.agents.llm.budget import stage_messages
from evigate.server.agents.llm.client import ChatReply, LLMClient, LLMOutputError
from evigate.server.agents.llm.composer import LLMComposer, echo_lines
from evigate.server.agents.llm.executor import LLMExecutor, tool_result_message
from evigate.server.agents.llm.llm_settings import LLMSettings
from evigate.server.agents.llm.prompt_loader import echo_phrases, load_prompt
from evigate.server.agents.offline.composer import OfflineComposer
from evigate.server.deadline import Deadline
from evigate.server.tools.registry import default_registry


def _notes(reply: ChatReply) -> tuple[StageNote, ...]:
    return tuple(StageNote(note) for note in reply.notes)


class LLMPlanner:
    """Chooses a skill and names the tool calls (tool, arguments) that code runs first. With an
    `anchor` (the offline planner), code plans first and the model is asked only where code's plan
    has a gap (server.agents.llm.routing): then the calls code read come first and the model adds
    to them (server.agents.llm.anchor)."""

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
            gap = routing.plan_gap(contracts.planned_calls(code.data.get("tool_calls"), registry.names()))
            if gap is None:
                note = StageNote(
                    routing.BY_CODE, "code read every call off the question; the model was not asked"
                )
                return dataclasses.replace(code, notes=(*code.notes, note))
            code_calls = contracts.planned_calls(code.data.get("tool_calls"), registry.names())
        payload: JSON = {
            "query": query,
            "language": language,
            # names and descriptions only: the skills' steps and keywords are the offline planner's
            "skills": [{"name": s.name, "description": s.description} for s in skills],
        }
        if self._anchor is not None:
            payload["calls_code_runs"] = code_calls
        data, reply = await self._client.chat_json(
            "planner",
            stage_messages(prompt.text, query, payload),
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
    """The model judges each claim; code caps its verdict (server.pipeline.verdicts). With `code`
    (the offline verifier), a verdict below code's on claims code wrote and the Gatekeeper passed is
    a recorded disagreement and code's verdict stands: the model may not sink an answer over
    claims that quote their evidence word for word. So when code's own check of such claims says
    PASS, the model is not asked at all (a `by_code` note says why)."""

    def __init__(self, client: LLMClient, code: Verifier | None = None) -> None:
        self._client = client
        self._code = code

    async def verify(self, verifier_input: JSON, deadline: Deadline) -> StageOutput:
        prompt = load_prompt("verifier")
        claims_by = verifier_input.get(routing.CLAIMS_BY)
        gate = (verifier_input.get("gatekeeper_result") or {}).get("severity")
        code: StageOutput | None = None
        if self._code is not None and claims_by == "code" and gate == Severity.NONE:
            code = await self._code.verify(verifier_input, deadline)
            if str(code.data.get("verdict")) == Verdict.PASS:
                # the model could only agree or disagree, and a disagreement is recorded, never
                # the verdict: asking it would cost the session minutes on a CPU and change nothing
                note = StageNote(
                    routing.BY_CODE,
                    "code wrote every claim, the Gatekeeper passed them and code's check supports "
                    "each (PASS); the model's verdict could not change that, so it was not asked",
                )
                return dataclasses.replace(code, notes=(*code.notes, note))
        shown = {
            k: v for k, v in verifier_input.items() if k not in (routing.CLAIMS_BY, "executor_final_answer")
        }
        if (verifier_input.get("executor_output_parse_status") or {}).get("status") == "invalid":
            shown["executor_final_answer"] = verifier_input.get("executor_final_answer")
        data, reply = await self._client.chat_json(
            "verifier",
            stage_messages(prompt.text, str(verifier_input.get("original_query", "")), shown),
            deadline,
            schema_name="verdict",
            schema=contracts.VERIFIER_SCHEMA,
        )
        model = StageOutput(data=contracts.verdict(data), prompt_version=prompt.version, notes=_notes(reply))
        if code is None:
            return model
        said, kept = str(model.data["verdict"]), str(code.data.get("verdict"))
        # a claim the model calls unsupported that code's check supports would be left out of the
        # answer: that is a disagreement too
        refused = sorted(_unsupported(model.data) - _unsupported(code.data))
        if _RANK.get(said, 0) >= _RANK.get(kept, 0) and not refused:
            return model
        what = f"{said}, and {', '.join(refused)} unsupported," if refused else said
        note = StageNote(
            routing.VERIFIER_DISAGREEMENT,
            f"the model said {what} of claims code wrote and verified; code's {kept} stands "
            f"(the model: {str(model.data.get('rationale', ''))[:200]})",
        )
        return dataclasses.replace(code, notes=(*model.notes, *code.notes, note))


def _unsupported(verdict: JSON) -> set[str]:
    checks = verdict.get("claim_checks") or []
    return {str(c.get("claim_id")) for c in checks if isinstance(c, dict) and c.get("supported") is False}


_RANK: dict[str, int] = {Verdict.REJECT: 0, Verdict.LOW_CONFID: 1, Verdict.PASS: 2}


def build_llm_backend(
    settings: LLMSettings,
    *,
    client: LLMClient | None = None,
    anchor: Planner | None = None,
    code_executor: Executor | None = None,
    code_verifier: Verifier | None = None,
) -> AgentBackend:
    """The llm backend; `anchor` is the planner whose calls the LLM plan starts with, and the
    `code_*` stages the offline ones that handle what code is strong at (server.agents.llm.routing).
    Its `backend.aclose()` closes the client it created; a `client` passed in stays the caller's to
    close (`await client.aclose()`)."""
    owned = client is None
    client = client or LLMClient(settings)
    return AgentBackend(
        name="llm",
        planner=LLMPlanner(client, anchor),
        executor=LLMExecutor(client, code_executor),
        verifier=LLMVerifier(client, code_verifier),
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
