"""Reading what small models write as text: tool calls in the content instead of the protocol's
`tool_calls`, and where the JSON of a reply sits (alone, in a code fence, with text around it)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from evigate.server.jsontext import closed, find_json_object

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


def tool_calls_in_text(content: str, offered: Collection[str]) -> tuple[tuple[str, str], ...]:
    """The tool calls written in `content` (Hermes/Qwen `<tool_call>{...}</tool_call>` tags, or one
    JSON object `{"name": <tool>, "arguments": {...}}`, also under "function" / "tool"), each naming an
    offered tool, as (name, arguments JSON text); () when there is none."""
    blocks = [m.group(1) for m in _TAGGED.finditer(content)] or [content]
    calls: list[tuple[str, str]] = []
    for block in blocks:
        call = _as_call(find_json_object(block), offered)
        if call is not None:
            calls.append((call[0], json.dumps(call[1], ensure_ascii=False)))
    return tuple(calls)


def _as_call(data: dict[str, Any] | None, offered: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    if data is None:
        return None
    function = data.get("function")
    inner: dict[str, Any] = function if isinstance(function, dict) else data
    name = inner.get("name") or inner.get("tool") or inner.get("tool_name")
    if not isinstance(name, str) or name not in offered:
        return None
    arguments = inner.get("arguments", inner.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    return (name, arguments) if isinstance(arguments, dict) else None


def json_placement(content: str) -> str | None:
    """None when the reply is exactly one JSON object; else how it was found: "json_in_code_fence",
    "json_brackets_closed" (its last closing brackets were missing) or "json_with_surrounding_text"."""
    text = content.strip()
    try:
        if isinstance(json.loads(text), dict):
            return None
    except (json.JSONDecodeError, RecursionError):
        pass
    for match in _FENCE.finditer(text):
        if find_json_object(match.group(1)) is not None:
            return "json_in_code_fence"
    if closed(text) != text:
        return "json_brackets_closed"
    return "json_with_surrounding_text"
