"""The LLM Executor, evidence first (docs/design.md §2.2).

1. Code runs the tool calls the plan names, before the model writes anything. With `code` (the
   offline Executor), when one of them came back with supporting evidence, code writes the claims,
   quoting it (server.agents.llm.routing); the model is asked when none did.
2. The model sees those results (every citable ref with its invocation id and raw path; the
   reply's form is in the prompt, with placeholders only: no claim is written for it to copy), and
   may call more tools within its budget: the plan's tools, `list_services` and `lookup_knowledge`.
3. Only then may it write claims. A final reply while no tool of this session has run is not
   accepted: the turn is repeated, with `tool_choice` forcing a call where the endpoint allows
   it; a reply holding no JSON object gets one repeat too. A model that still does neither
   raises LLMOutputError, which the stage's fallback turns into an offline run.
"""

from __future__ import annotations

import dataclasses
import json
import logging

from evigate.rules.enums import ToolName
from evigate.server.agents.base import (
    JSON,
    Executor,
    ExecutorOutput,
    ExecutorTask,
    StageNote,
)
from evigate.server.agents.llm import follow_up, routing
from evigate.server.agents.llm.budget import dumps, shared_tools, stage_messages
from evigate.server.agents.llm.client import (
    ChatReply,
    LLMClient,
    LLMError,
    LLMOutputError,
    LLMUnavailableError,
    ToolCallRequest,
)
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.agents.llm.replies import failure_kind
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


class LLMExecutor:
    """Planned calls first, then a tool-calling loop of at most `max_tool_steps` calls per round."""

    def __init__(self, client: LLMClient, code: Executor | None = None) -> None:
        self._client = client
        self._code = code
        self._forcing_refused = False  # the endpoint rejected tool_choice="required" once

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        prompt = load_prompt("executor")
        budget = self._client.settings.max_tool_steps
        results: list[ToolCallResult] = []
        notes: list[StageNote] = []
        for planned in _planned(task.plan)[:budget]:
            results.append(await task.tools.call(planned[0], planned[1], task.deadline))
        gap = routing.evidence_gap(results)
        if self._code is not None and task.retry_context is None:
            why = gap or routing.low_evidence(results)
            if why is not None and results:
                notes = await self._follow_up(task, results, why)
            if gap is None or any(follow_up.found_evidence(r) for r in results):
                return await self._quoted_by_code(self._code, task, results, notes)
        if gap is not None and not notes:
            notes.append(StageNote("model_asked", gap))
        used = len(results)
        messages = stage_messages(prompt.text, task.query, {"task": _task_payload(task)})
        if results:
            messages.append({"role": "user", "content": dumps(evidence_listing(results, task.language))})
        schemas = shared_tools()  # every stage's tools block: the prefix they share stays the same
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
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": dumps(content)})
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
                    {"role": "user", "content": dumps(listing)},
                ]
                continue
            return ExecutorOutput(text, prompt.version, tuple(results), tuple(notes))

    async def _follow_up(
        self, task: ExecutorTask, results: list[ToolCallResult], why: str
    ) -> list[StageNote]:
        """The calls the model adds where code's evidence is missing or ranks low, run (their
        results appended to `results`), and the notes saying why it was asked, and what it added or
        why it added none."""
        asked = StageNote("model_asked", why)
        try:
            calls, note = await follow_up.ask(
                self._client, task.query, results, task.tools.schemas(), task.deadline
            )
        except LLMError as error:
            kind = failure_kind(error)
            log.warning("llm.follow_up_unused reason=%s error=%s", kind, error)
            return [
                asked,
                StageNote(follow_up.MODEL_UNUSED, f"{kind}: {type(error).__name__}: {str(error)[:300]}"),
            ]
        for call in calls:
            results.append(await task.tools.call(call["tool_name"], call["arguments"], task.deadline))
        return [asked, note]

    async def _quoted_by_code(
        self, code: Executor, task: ExecutorTask, results: list[ToolCallResult], notes: list[StageNote]
    ) -> ExecutorOutput:
        """Code writes the claims: its own calls' (the same ToolBox: calls already made are deduped,
        not run again), and quotes of what the model's calls found, its planned ones and those it
        added (server.agents.llm.follow_up)."""
        out = await code.execute(task)
        added = follow_up.new_results(out.tool_calls, results)
        language = "en" if task.language == "en" else "zh"
        evidence = follow_up.quote_added(json.loads(out.raw_text), added, language)
        found = sum(follow_up.quotable(r) for r in added)
        if found:
            notes.append(
                StageNote(
                    follow_up.MODEL_CALLS_QUOTED,
                    f"{found} call(s) the model made found evidence; code quoted it",
                )
            )
        note = StageNote(routing.BY_CODE, "a planned call found supporting evidence; code quoted it")
        return dataclasses.replace(
            out,
            raw_text=json.dumps(evidence, ensure_ascii=False),
            tool_calls=(*out.tool_calls, *added),
            notes=(*out.notes, *notes, note),
        )

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


def _task_payload(task: ExecutorTask) -> JSON:
    payload: JSON = {
        "language": task.language,
        "plan": task.plan.get("plan", []),
        "planned_calls": task.plan.get("tool_calls", []),
        "tools": offered_tools(task.plan, task.tools.schemas()),
        "round": task.round,
    }
    if task.retry_context is not None:
        payload["retry_context"] = task.retry_context
    return payload


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


# Tools the model may call beyond the plan's: resolving a name, and the runbooks.
_ALWAYS_OFFERED = (ToolName.LIST_SERVICES, ToolName.LOOKUP_KNOWLEDGE)
_CORE_TOOLS = (ToolName.QUERY_METRICS, ToolName.QUERY_LOGS)


def offered_tools(plan: JSON, schemas: list[JSON] | None = None) -> list[str]:
    """The tools the task names for the model (all are declared, in the tools block every stage
    shares): the plan's, or the core ones when it planned none, and the two that resolve a name
    and read a runbook; of `schemas` (the session's tools), those it has."""
    planned = [name for name, _ in _planned(plan)]
    names = list(dict.fromkeys([*(planned or _CORE_TOOLS), *_ALWAYS_OFFERED]))
    if schemas is None:
        return names
    have = {str(schema.get("function", {}).get("name")) for schema in schemas}
    return [name for name in names if name in have]


def evidence_listing(results: list[ToolCallResult], language: str) -> JSON:
    """The first MAX_LISTED_REFS refs of each call, with id and path (the only things a claim may
    cite; each text listed once), ranked: the calls that found evidence first, in the order they
    ran (the plan's first, which code read off the question), then those that found none; and the
    failed calls. No claim is written for the model: it writes its own from these refs."""
    found: list[JSON] = []
    none: list[JSON] = []
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
                entry = {
                    "source_invocation_id": invocation,
                    "tool_name": result.tool_name,
                    "raw_path": ref["raw_path"],
                    "text": str(ref.get("text", "")),
                }
                (none if ref["raw_path"] == "$.no_evidence" else found).append(entry)
    listing: JSON = {
        "tool_results_of_this_session": [tool_result_message(r, with_refs=False) for r in results],
        "citable_refs": [*found, *none],
        "language": language,
    }
    if failed:
        listing["failed_calls"] = failed
    return listing


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
