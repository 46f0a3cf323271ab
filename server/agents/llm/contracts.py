"""JSON schemas (for response_format=json_schema) and shape checks of the planner and verifier
replies (the composer's are server.agents.llm.composer's). The checks turn a model's JSON into the
seed shape or raise LLMOutputError; the pipeline (not this module) enforces the verdict constraints
of docs/design.md §5.2."""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from evigate.rules.enums import Verdict
from evigate.server.agents.llm.client import LLMOutputError

JSON = dict[str, Any]
VERDICTS = tuple(Verdict)

_STR = {"type": "string"}
PLANNER_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "selected_skill": {"type": ["string", "null"]},
        "selection_reason": _STR,
        "plan": {"type": "array", "items": _STR},
        "reasoning": _STR,
        "tool_calls": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"tool_name": _STR, "arguments": {"type": "object"}},
                "required": ["tool_name", "arguments"],
            },
        },
    },
    "required": ["selected_skill", "selection_reason", "plan", "reasoning", "tool_calls"],
}
MAX_PLANNED_CALLS = 4

VERIFIER_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": [v.value for v in VERDICTS]},
        "groundedness_score": {"type": "number"},
        "critical_fact_count": {"type": "integer"},
        "claim_checks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "claim_id": _STR,
                    "supported": {"type": "boolean"},
                    "reason": _STR,
                    "unsupported_facts": {"type": "array", "items": _STR},
                },
                "required": ["claim_id", "supported", "reason", "unsupported_facts"],
            },
        },
        "facts_checked": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "claim_id": _STR,
                    "fact": _STR,
                    "kind": _STR,
                    "supported": {"type": "boolean"},
                },
                "required": ["claim_id", "fact", "kind", "supported"],
            },
        },
        "rationale": _STR,
    },
    "required": [
        "verdict",
        "groundedness_score",
        "critical_fact_count",
        "claim_checks",
        "facts_checked",
        "rationale",
    ],
}


def planner_plan(data: JSON, skill_names: Collection[str], tool_names: Collection[str] = ()) -> JSON:
    """planner_plan: an unknown skill name becomes null (with the reason saying so); planned tool
    calls naming no registered tool, or without an arguments object, are dropped."""
    plan = data.get("plan", [])
    if not isinstance(plan, list):
        raise LLMOutputError(f"planner: 'plan' must be a list, got {type(plan).__name__}")
    skill = data.get("selected_skill")
    reason = _text(data.get("selection_reason"))
    if skill is not None and (not isinstance(skill, str) or skill not in skill_names):
        reason = f"{reason} (the model chose unknown skill {skill!r}; none selected)".strip()
        skill = None
    return {
        "selected_skill": skill or None,
        "selection_reason": reason,
        "plan": [_text(step) for step in plan if step is not None],
        "reasoning": _text(data.get("reasoning")),
        "tool_calls": planned_calls(data.get("tool_calls"), tool_names),
    }


def planned_calls(value: Any, tool_names: Collection[str]) -> list[JSON]:
    """The well-formed planned calls: a registered tool's name and an object of arguments."""
    calls: list[JSON] = []
    for item in _dicts(value):
        name = item.get("tool_name") or item.get("tool") or item.get("name")
        arguments = item.get("arguments", {})
        if isinstance(name, str) and name in tool_names and isinstance(arguments, dict):
            call = {"tool_name": name, "arguments": arguments}
            if call not in calls:
                calls.append(call)
    return calls[:MAX_PLANNED_CALLS]


def verdict(data: JSON) -> JSON:
    raw = data.get("verdict")
    word = raw.strip().upper().replace("-", "_") if isinstance(raw, str) else None
    if word == "LOW_CONFIDENCE":
        word = Verdict.LOW_CONFID
    if word not in VERDICTS:
        raise LLMOutputError(f"verifier: 'verdict' must be one of {', '.join(VERDICTS)}, got {raw!r}")
    score = data.get("groundedness_score")
    grounded = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else 0.0
    count = data.get("critical_fact_count")
    return {
        "verdict": Verdict(word),
        "groundedness_score": min(1.0, max(0.0, grounded)) if math.isfinite(grounded) else 0.0,
        "critical_fact_count": max(0, int(count))
        if isinstance(count, int) and not isinstance(count, bool)
        else 0,
        "claim_checks": [
            {
                "claim_id": _text(c.get("claim_id")),
                "supported": c.get("supported") is True,
                "reason": _text(c.get("reason")),
                "unsupported_facts": [_text(f) for f in _list(c.get("unsupported_facts"))],
            }
            for c in _dicts(data.get("claim_checks"))
        ],
        "facts_checked": [
            {
                "claim_id": _text(f.get("claim_id")),
                "fact": _text(f.get("fact")),
                "kind": _text(f.get("kind")),
                "supported": f.get("supported") is True,
            }
            for f in _dicts(data.get("facts_checked"))
        ],
        "rationale": _text(data.get("rationale")),
    }


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[JSON]:
    return [item for item in _list(value) if isinstance(item, dict)]
