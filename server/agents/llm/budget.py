"""What a stage prompt costs, and the message layout that lets a local server reuse its cache.

A 0.5B model on a 2-core CPU reads a few hundred prompt tokens a second, so every stage's
instructions (its system prompt and the tools it is offered) stay under INSTRUCTION_BUDGET tokens
(tests/agents/llm/test_prompt_budget.py), and every stage's messages start alike: the same
preamble, then the question, then the stage's own instructions and input. llama.cpp keeps the
longest prefix a request shares with the one before and reads only the rest.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

JSON = dict[str, Any]
INSTRUCTION_BUDGET = 1500
PREAMBLE = (
    "You are one stage of an evidence-gated operations diagnosis pipeline. Code runs the tools, "
    "checks every citation against the stored tool results and refuses any fact they do not hold. "
    "Reply exactly as your stage's instructions say."
)
_PIECES = re.compile(
    r"[A-Za-z]+|[0-9]|[\u3000-\u9fff\uff00-\uffef]|[^\sA-Za-z0-9\u3000-\u9fff\uff00-\uffef]+"
)


def estimate_tokens(text: str) -> int:
    """An upper estimate of a BPE tokenizer's count (Qwen's, OpenAI's): a run of Latin letters
    every 4 characters, each digit, each CJK character and each other symbol one token."""
    return sum(
        max(1, math.ceil(len(p) / 4)) if p[0].isascii() and p[0].isalpha() else 1
        for p in _PIECES.findall(text)
    )


def stage_messages(instructions: str, query: str, payload: JSON | str) -> list[JSON]:
    """A stage's messages: the shared preamble and the question (identical across a session's
    stages), then the stage's instructions, then its input."""
    body = payload if isinstance(payload, str) else dumps(payload)
    return [
        {"role": "system", "content": PREAMBLE},
        {"role": "user", "content": f"Question: {query}"},
        {"role": "system", "content": instructions},
        {"role": "user", "content": body},
    ]


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))


_CLAUSE_END = re.compile(r"[;:(]|\be\.g\.|\.(\s|$)")
# a parameter the model never needs: the tools' own default applies
_LEFT_OUT = frozenset({"limit"})
# parameters whose name says it all
_SELF_EVIDENT = frozenset({"since", "until", "at", "step", "service", "level", "state", "namespace"})


def _first_clause(text: str, limit: int) -> str:
    match = _CLAUSE_END.search(text)
    clause = (text[: match.start()] if match else text).strip().rstrip(" ,")
    return clause if len(clause) <= limit else clause[: limit - 1].rstrip() + "…"


def compact_tool(function: JSON) -> JSON:
    """A tool's function schema cut to what a call needs: its first clause, and each parameter's
    type, enum and the first clause of its description (no `limit`: the tool's default applies)."""
    parameters = function.get("parameters") or {}
    properties: JSON = {}
    for name, spec in (parameters.get("properties") or {}).items():
        if name in _LEFT_OUT:
            continue
        short: JSON = {key: spec[key] for key in ("type", "enum", "items") if key in spec}
        described = _first_clause(str(spec.get("description", "")), 60)
        if described and name not in _SELF_EVIDENT:
            short["description"] = described
        properties[name] = short
    compact: JSON = {
        "name": function.get("name", ""),
        "description": _first_clause(str(function.get("description", "")), 100),
        "parameters": {"type": "object", "properties": properties},
    }
    if parameters.get("required"):
        compact["parameters"]["required"] = list(parameters["required"])
    return compact


def tool_summary(function: JSON) -> JSON:
    """A tool as the Planner needs it: name, first clause and parameter names."""
    compact = compact_tool(function)
    return {
        "name": compact["name"],
        "description": compact["description"],
        "parameters": list(compact["parameters"]["properties"]),
    }


def compact_schemas(schemas: Iterable[JSON], names: Iterable[str] | None = None) -> list[JSON]:
    """The OpenAI tool schemas of `names` (all when None), each compacted."""
    wanted = None if names is None else set(names)
    return [
        {"type": "function", "function": compact_tool(schema["function"])}
        for schema in schemas
        if wanted is None or schema.get("function", {}).get("name") in wanted
    ]
