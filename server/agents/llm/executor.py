"""The LLM Executor, evidence first (docs/design.md §2.2).

1. Code runs the tool calls the plan names, before the model writes anything.
2. The model sees those results (every citable ref with its invocation id and raw path, and an
   example reply citing the first ref of each call), and may call more tools within its budget.
3. Only then may it write claims. A final reply while no tool of this session has run is not
   accepted: the turn is repeated, with `tool_choice` forcing a call where the endpoint allows
   it; a reply holding no JSON object gets one repeat too. A model that still does neither
   raises LLMOutputError, which the stage's fallback turns into an offline run.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from evigate.rules.enums import ToolName
from evigate.server.agents.base import JSON, ExecutorOutput, ExecutorTask, StageNote
from evigate.server.agents.llm.client import (
    ChatReply,
    LLMClient,
    LLMOutputError,
    LLMUnavailableError,
    ToolCallRequest,
)
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.jsontext import find_json_object
from evigate.server.tools.calls import ToolCallResult

log = logging.getLogger("evigate.llm")

_BUDGET_EXHAUSTED = (
    "Tool budget exhausted: make no more tool calls. Reply now with the final executor_evidence_v2 JSON "
    "object, citing only the tool results above."
)
_NO_TOOL_YET = (
    "No tool of this session has run, so there is nothing to cite yet. Call a tool now (one of the "
    "declared functions) for exactly what the question names; write claims only after its result."
)
_JSON_ONLY = (
    "Your reply held no JSON object. Reply with the executor_evidence_v2 JSON object only, citing "
    "only the refs listed here."
)


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


class LLMExecutor:
    """Planned calls first, then a tool-calling loop of at most `max_tool_steps` calls per round."""

    def __init__(self, client: LLMClient) -> None:
        self._client = client
        self._forcing_refused = False  # the endpoint rejected tool_choice="required" once

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        prompt = load_prompt("executor")
        budget = self._client.settings.max_tool_steps
        results: list[ToolCallResult] = []
        notes: list[StageNote] = []
        for planned in _planned(task.plan)[:budget]:
            results.append(await task.tools.call(planned[0], planned[1], task.deadline))
        used = len(results)
        payload: JSON = {
            "query": task.query,
            "language": task.language,
            "plan": task.plan,
            "round": task.round,
        }
        if task.retry_context is not None:
            payload["retry_context"] = task.retry_context
        messages: list[JSON] = [
            {"role": "system", "content": prompt.text},
            {"role": "user", "content": _dumps({"task": payload})},
        ]
        if results:
            messages.append({"role": "user", "content": _dumps(evidence_listing(results, task.language))})
        schemas = task.tools.schemas()
        forced = nudged = False
        while True:
            choice = "none" if used >= budget else ("required" if forced and not results else None)
            reply = await self._chat(messages, task, schemas, choice)
            notes.extend(StageNote(note) for note in reply.notes)
            if reply.tool_calls and used < budget:
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
                continue
            text = reply.content or ""
            if not results:
                if forced:
                    raise LLMOutputError("executor: the model wrote no tool call, twice", raw_text=text)
                forced = True
                notes.append(StageNote("tool_call_forced", "a reply came before any tool of the session ran"))
                messages += [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": _NO_TOOL_YET},
                ]
                continue
            if find_json_object(text) is None and not nudged and used < budget:
                # one repeat; after it the text goes on as it is (unparseable: the round is REJECT)
                nudged = True
                notes.append(StageNote("json_requested_again", "the reply held no JSON object"))
                listing = {**evidence_listing(results, task.language), "instruction": _JSON_ONLY}
                messages += [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": _dumps(listing)},
                ]
                continue
            return ExecutorOutput(text, prompt.version, tuple(results), tuple(notes))

    async def _chat(
        self, messages: list[JSON], task: ExecutorTask, schemas: list[JSON], choice: str | None
    ) -> ChatReply:
        if choice == "required" and self._forcing_refused:
            choice = None
        try:
            return await self._client.chat(
                "executor", messages, task.deadline, tools=schemas, tool_choice=choice
            )
        except LLMUnavailableError as exc:
            if choice != "required" or exc.status not in (400, 422, 500):
                raise
            # not every OpenAI-compatible server knows "required": the repeat still says it in words
            self._forcing_refused = True
            return await self._client.chat("executor", messages, task.deadline, tools=schemas)

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


def _planned(plan: JSON) -> list[tuple[str, JSON]]:
    calls = plan.get("tool_calls") if isinstance(plan, dict) else None
    out: list[tuple[str, JSON]] = []
    for item in calls if isinstance(calls, list) else []:
        if (
            isinstance(item, dict)
            and isinstance(item.get("tool_name"), str)
            and isinstance(item.get("arguments"), dict)
        ):
            out.append((item["tool_name"], item["arguments"]))
    return out


# Refs of one call shown to the model. The Gatekeeper checks a citation against the whole stored
# result, so showing fewer loses nothing citable; showing them all can overflow a small model's
# context (a log query's lines with their stack traces, listed twice, took 10,000 tokens).
MAX_LISTED_REFS = 5


def tool_result_message(result: ToolCallResult, *, with_refs: bool = True) -> JSON:
    """What the model sees of one tool call: enough to cite it exactly. Without refs (the listing
    has them once, in `citable_refs`), only how many there are."""
    details = result.retrieval_details
    refs = details.get("evidence_refs") or []
    message: JSON = {
        "source_invocation_id": result.invocation_id,
        "tool_name": result.tool_name,
        "arguments": result.arguments,
        "status": result.status,
        "evidence_status": details.get("evidence_status"),
        "match_level": details.get("match_level"),
        "ref_count": len(refs),
    }
    if with_refs:
        message["evidence_refs"] = refs[:MAX_LISTED_REFS]
    if result.error:
        message["error"] = result.error
    if "deduped_from" in details:
        message["deduped_from"] = details["deduped_from"]
    return message


EXAMPLE_CLAIMS = 2  # as many claims as a narrow answer has at most (docs/design.md §2.3)


def evidence_listing(results: list[ToolCallResult], language: str) -> JSON:
    """The first MAX_LISTED_REFS refs of each call, with id and path (the only things a claim may
    cite; each text listed once), failed calls, and an example reply made of this session's own
    evidence: one claim per call, in the order the calls ran (the plan's first, which code read off
    the question), each citing that call's first ref. The first ref of the session alone would
    make the example, and the weak model that copies it, about whichever call happened to run
    first."""
    refs: list[JSON] = []
    failed: list[JSON] = []
    for result in results:
        if result.status != "success":
            failed.append(
                {"tool_name": result.tool_name, "arguments": result.arguments, "error": result.error}
            )
            continue
        invocation = result.retrieval_details.get("deduped_from") or result.invocation_id
        for ref in (result.retrieval_details.get("evidence_refs") or [])[:MAX_LISTED_REFS]:
            if isinstance(ref, dict) and isinstance(ref.get("raw_path"), str):
                refs.append(
                    {
                        "source_invocation_id": invocation,
                        "tool_name": result.tool_name,
                        "raw_path": ref["raw_path"],
                        "text": str(ref.get("text", "")),
                    }
                )
    listing: JSON = {
        "tool_results_of_this_session": [tool_result_message(r, with_refs=False) for r in results],
        "citable_refs": refs,
    }
    if failed:
        listing["failed_calls"] = failed
    if refs:
        listing["example_output"] = example_output(_first_ref_per_call(refs), language)
    return listing


def _first_ref_per_call(refs: list[JSON]) -> list[JSON]:
    firsts: dict[Any, JSON] = {}
    for ref in refs:
        firsts.setdefault(ref["source_invocation_id"], ref)
    # A runbook's text copied as an observation states knowledge as a fact about the environment,
    # which the Verifier rightly refuses: the example quotes knowledge only when nothing else ran.
    observed = [ref for ref in firsts.values() if ref["tool_name"] != ToolName.LOOKUP_KNOWLEDGE]
    return (observed or list(firsts.values()))[:EXAMPLE_CLAIMS]


def example_output(refs: list[JSON], language: str) -> JSON:
    """A valid executor_evidence_v2 reply with one claim citing each of `refs` word for word."""
    return {
        "answer_version": "executor_evidence_v2",
        "claims": [_example_claim(i, ref, language) for i, ref in enumerate(refs, start=1)],
        "hypotheses": [],
        "recommended_actions": [],
        "missing_info": [],
    }


def _example_claim(number: int, ref: JSON, language: str) -> JSON:
    negative = ref["raw_path"] == "$.no_evidence"
    if negative:
        text = (
            f"当前查询未检索到匹配证据（{ref['tool_name']}）。"
            if language == "zh"
            else f"This query found no matching evidence ({ref['tool_name']})."
        )
    else:
        text = ref["text"]
    return {
        "claim_id": f"claim-{number}",
        "claim_type": "negative_observation" if negative else "observation",
        "claim_text": text,
        "support_level": "direct",
        "evidence_bindings": [
            {
                "source_type": "tool_trace",
                "source_id": "",
                "tool_name": ref["tool_name"],
                "source_invocation_id": ref["source_invocation_id"],
                "raw_path": ref["raw_path"],
                "evidence_excerpt": ref["text"],
            }
        ],
    }


def _assistant_message(reply: ChatReply) -> JSON:
    """The model's tool-calling turn, sent back with the results. `content` is a string even when
    the reply had none: llama.cpp's server refuses an assistant message whose content is null (HTTP
    500, "Input should be a valid string"), which OpenAI allows."""
    return {
        "role": "assistant",
        "content": reply.content or "",
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ],
    }
