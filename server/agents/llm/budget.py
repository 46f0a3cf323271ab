"""What a stage prompt costs, and the request layout that lets a local server reuse its cache.

A 0.5B model on a 2-core CPU reads a few hundred prompt tokens a second, so every stage's
instructions (the preamble, the tools block and its system prompt) stay under INSTRUCTION_BUDGET
tokens (tests/agents/llm/test_prompt_budget.py), and every request of every stage starts alike,
byte for byte: the same preamble, the same tools block (`shared_tools`: every stage declares the
same tools; the stages that call none send `tool_choice: none`), then the stage's own
instructions, and only then the question and the stage's input. llama.cpp keeps the longest
prefix a request shares with the request before (or, with a prompt cache, with
any it kept) and reads only the rest; a chat template puts the tools into the first system turn
(Qwen's does), so a tools block that differed between stages would end the shared prefix right
after the preamble. The preamble and the tools block are the same in every request of every
session, and a stage's instructions the same in each of its requests, so a server reads them once
(the same stage asked in consecutive sessions, as the Composer is where code decided the rest,
reads only the question and its input).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from evigate.server.tools.registry import default_registry

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
    """A stage's messages: the shared preamble (identical in every request), the stage's
    instructions (identical in each of its requests), then the question and the stage's input."""
    body = payload if isinstance(payload, str) else dumps(payload)
    return [
        {"role": "system", "content": PREAMBLE},
        {"role": "system", "content": instructions},
        {"role": "user", "content": f"Question: {query}"},
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


def compact_schemas(schemas: Iterable[JSON], names: Iterable[str] | None = None) -> list[JSON]:
    """The OpenAI tool schemas of `names` (all when None), each compacted."""
    wanted = None if names is None else set(names)
    return [
        {"type": "function", "function": compact_tool(schema["function"])}
        for schema in schemas
        if wanted is None or schema.get("function", {}).get("name") in wanted
    ]


@functools.cache
def _shared_tools() -> tuple[str, ...]:
    return tuple(dumps(schema) for schema in compact_schemas(default_registry().openai_schemas()))


def shared_tools() -> list[JSON]:
    """The tools block every stage's requests declare: each registered tool, compacted, in the
    registry's order (the same bytes in every request)."""
    return [json.loads(schema) for schema in _shared_tools()]


def rendered(messages: Sequence[JSON], tools: Sequence[JSON] | None) -> str:
    """A request as a chat template lays it out (Qwen's, close enough to count tokens and the
    prefix two requests share): the first system message, the tools block, then each message."""
    parts: list[str] = []
    rest = list(messages)
    if rest and rest[0].get("role") == "system":
        parts.append(f"system\n{rest.pop(0).get('content') or ''}")
    if tools:
        parts.append("# Tools\n" + "\n".join(dumps(tool) for tool in tools))
    for message in rest:
        calls = message.get("tool_calls") or []
        parts.append(f"{message.get('role')}\n{message.get('content') or ''}{dumps(calls) if calls else ''}")
    return "\n".join(parts)


def shared_prefix(first: str, second: str) -> int:
    """How many characters two rendered requests share from the start."""
    limit = min(len(first), len(second))
    index = 0
    while index < limit and first[index] == second[index]:
        index += 1
    return index
