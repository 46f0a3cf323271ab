"""Scripted stages of the llm backend for the pipeline tests and the bench.

Every stage gets its own model name, so one FakeOpenAI default responder (`StageScript`) can answer
each request by stage: scripted steps first, then the stage's default. The defaults are a plan, a
*credulous* Verifier (PASS for every claim: what the code constraints must catch is left to them)
and a Composer that writes each slot of code's draft as its first fact. Executor steps are
scripted by each test; `cite()` answers from the tool results the model really received, so the
invocation ids are real.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from evigate.server.agents.llm import LLMSettings
from tests.support.fake_openai import (
    RecordedRequest,
    Reply,
    Responder,
    Step,
    ToolCall,
    json_reply,
    tool_call,
    tool_calls,
)

JSON = dict[str, Any]
STAGES = ("planner", "executor", "verifier", "composer")
PLAN: JSON = {
    "selected_skill": None,
    "selection_reason": "narrow question: one exact query",
    "plan": ["query the one thing the question names"],
    "reasoning": "scripted",
}
HIGH_CPU_ARGS: JSON = {"service": "payment-service", "alert_name": "HighCPUUsage", "state": "firing"}
HIKARI_ARGS: JSON = {"service": "inventory-service", "keyword": "HikariCP"}
CPU_CLAIM = "payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 92%。"
# the offline Composer's sentence for the alert CPU_CLAIM states
CPU_DRAFT = "是的，payment-service 的 HighCPUUsage 告警正在触发（状态 firing，当前 92%，持续 25m）。"


def settings(base_url: str, **overrides: Any) -> LLMSettings:
    values: JSON = {
        "base_url": base_url,
        "api_key": "sk-test",
        "model": "unused",
        "planner_model": "planner",
        "executor_model": "executor",
        "verifier_model": "verifier",
        "composer_model": "composer",
        "timeout_s": 5.0,
        "max_retries": 3,
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "max_tool_steps": 4,
        "json_mode": "json_object",
        # every stage on the model: these scripts test the model's path (code first has its own tests)
        "planner_anchor": "none",
    }
    values.update(overrides)
    return LLMSettings(**values)


def payload(request: RecordedRequest) -> JSON:
    """The JSON the stage sent as its input (its first user message that is a JSON object; the
    question comes before it as text)."""
    for message in request.messages:
        if message.get("role") == "user":
            try:
                data = json.loads(message["content"])
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict):
                return data
    return {}


def credulous_verifier(request: RecordedRequest) -> Step:
    claims = payload(request).get("executor_structured_output", {}).get("claims") or []
    ids = [c.get("claim_id", "") for c in claims if isinstance(c, dict)]
    return json_reply(
        {
            "verdict": "PASS",
            "groundedness_score": 1.0,
            "critical_fact_count": len(ids),
            "claim_checks": [
                {"claim_id": i, "supported": True, "reason": "looks fine", "unsupported_facts": []}
                for i in ids
            ],
            "facts_checked": [],
            "rationale": "every claim looks supported",
        }
    )


def stating_composer(request: RecordedRequest) -> Step:
    """Each slot's draft reworded: the model's own sentence for every slot (it differs from code's
    draft, and keeps the draft's names and values)."""
    return json_reply({"sentences": [slot_text(s["slot"], reworded(s["draft"])) for s in slots(request)]})


def reworded(draft: str) -> str:
    """A draft sentence as a model might reword it, every name and value kept."""
    return f"简言之，{draft}" if re.search(r"[\u4e00-\u9fff]", draft) else f"In short, {draft}"


def copying_composer(request: RecordedRequest) -> Step:
    """Each slot's draft as its text: a copy, which is code's sentence."""
    return json_reply({"sentences": [slot_text(s["slot"], s["draft"]) for s in slots(request)]})


def slots(request: RecordedRequest) -> list[JSON]:
    """The slots the Composer was asked to rewrite."""
    return [s for s in payload(request).get("slots", []) if isinstance(s, dict)]


def slot_text(slot: int, text: str) -> JSON:
    """One slot's text in a Composer's reply."""
    return {"slot": slot, "text": text}


def stated(claim: JSON) -> JSON:
    """A sentence stating `claim` as its text says."""
    kind = "absence" if claim.get("claim_type") == "negative_observation" else "finding"
    return sentence(kind, str(claim.get("claim_text", "")), str(claim.get("claim_id", "")))


def sentence(kind: str, text: str, *claim_ids: str, hypotheses: tuple[str, ...] = ()) -> JSON:
    """One sentence of a Composer's reply."""
    return {"kind": kind, "text": text, "claim_ids": list(claim_ids), "hypothesis_ids": list(hypotheses)}


def fixed(line: str) -> JSON:
    """A fixed line of a Composer's reply (code writes its text)."""
    return {"kind": "note", "text": "", "claim_ids": [], "hypothesis_ids": [], "fixed_line": line}


DEFAULTS: dict[str, Responder] = {
    "planner": json_reply(PLAN),
    "verifier": credulous_verifier,
    "composer": stating_composer,
}


class StageScript:
    """A FakeOpenAI default responder that dispatches on the request's model (= stage)."""

    def __init__(self, delay: float = 0.0, defaults: dict[str, Responder] | None = None) -> None:
        self.steps: dict[str, deque[Responder]] = {stage: deque() for stage in STAGES}
        self.delay = delay  # added to every reply (benches)
        self.defaults = {**DEFAULTS, **(defaults or {})}

    def add(self, stage: str, steps: Iterable[Responder]) -> StageScript:
        self.steps[stage].extend(steps)
        return self

    def __call__(self, request: RecordedRequest) -> Step:
        stage = request.model or ""
        queue = self.steps.get(stage)
        responder = queue.popleft() if queue else self.defaults.get(stage)
        if responder is None:
            raise AssertionError(f"no scripted {stage} step left for request #{request.index}")
        step = responder(request) if callable(responder) else responder
        if self.delay and isinstance(step, Reply):
            step = Reply(step.content, step.tool_calls, step.finish_reason, step.usage, self.delay)
        return step


def call(name: str = "query_metrics", arguments: JSON | None = None) -> Reply:
    calls: tuple[ToolCall, ...] = (tool_call(name, arguments if arguments is not None else HIGH_CPU_ARGS),)
    return tool_calls(*calls)


def _last_result(request: RecordedRequest) -> JSON:
    results = [r for r in request.tool_results() if isinstance(r, dict) and r.get("evidence_refs")]
    if not results:
        raise AssertionError("the model received no tool result with evidence refs")
    return results[-1]


def first_fields(text: str, count: int = 5) -> str:
    return ", ".join(text.split(", ")[:count])


def cite(
    *,
    claim_type: str = "observation",
    claim_text: str = CPU_CLAIM,
    invocation_id: Callable[[int], int | None] = lambda real: real,
    raw_path: str | None = None,
    excerpt: Callable[[str], str] = first_fields,
) -> Callable[[RecordedRequest], Step]:
    """The final executor_evidence_v2 reply, citing the last tool result the model received."""

    def respond(request: RecordedRequest) -> Step:
        result = _last_result(request)
        ref = result["evidence_refs"][0]
        return json_reply(
            {
                "answer_version": "executor_evidence_v2",
                "claims": [
                    {
                        "claim_id": "claim-1",
                        "claim_type": claim_type,
                        "claim_text": claim_text,
                        "support_level": "direct",
                        "evidence_bindings": [
                            {
                                "source_type": "tool_trace",
                                "source_id": "",
                                "tool_name": result["tool_name"],
                                "source_invocation_id": invocation_id(int(result["source_invocation_id"])),
                                "raw_path": raw_path or ref["raw_path"],
                                "evidence_excerpt": excerpt(ref["text"]),
                            }
                        ],
                    }
                ],
                "hypotheses": [],
                "recommended_actions": [],
                "missing_info": [],
            }
        )

    return respond


def listing(request: RecordedRequest) -> JSON:
    """The evidence listing the Executor was given (the results of the calls code ran first)."""
    for message in reversed(request.messages):
        if message.get("role") == "user":
            data = json.loads(message["content"])
            if isinstance(data, dict) and "citable_refs" in data:
                return data
    raise AssertionError("the executor was given no evidence listing")


def cite_first_ref(request: RecordedRequest) -> Step:
    """A weak model: one claim quoting the first ref it was listed, word for word."""
    ref = listing(request)["citable_refs"][0]
    negative = ref["raw_path"] == "$.no_evidence"
    claim = {
        "claim_id": "claim-1",
        "claim_type": "negative_observation" if negative else "observation",
        "claim_text": f"当前查询未检索到匹配证据（{ref['tool_name']}）。" if negative else ref["text"],
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
    return json_reply(
        {
            "answer_version": "executor_evidence_v2",
            "claims": [claim],
            "hypotheses": [],
            "recommended_actions": [],
            "missing_info": [],
        }
    )


def with_hypothesis(
    responder: Callable[[RecordedRequest], Step], text: str
) -> Callable[[RecordedRequest], Step]:
    """`responder`'s executor_evidence_v2 reply with one hypothesis added (an answer with one is
    written by the Composer, not by code alone)."""

    def respond(request: RecordedRequest) -> Step:
        step = responder(request)
        assert isinstance(step, Reply) and step.content is not None
        evidence = json.loads(step.content)
        evidence["hypotheses"] = [{"hypothesis_text": text, "reason": "scripted"}]
        return json_reply(evidence)

    return respond
