"""Finding the JSON object in a model's or an Executor's free text (code fences, prose around it)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

JSON = dict[str, Any]
MAX_BLOCKS = 64  # candidate starts tried: bounds the work on hostile text to O(64·n)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


def find_json_object(text: str) -> JSON | None:
    """The whole text if it is a JSON object (or one whose last closing brackets are missing), else
    a fenced block that is, else the first balanced `{...}` block that parses; None when there is
    none."""
    stripped = text.strip()
    candidates = [stripped, closed(stripped), *(m.group(1).strip() for m in _FENCE.finditer(stripped))]
    for candidate in candidates:
        value = _loads_object(candidate)
        if value is not None:
            return value
    for block in _balanced_blocks(stripped):
        value = _loads_object(block)
        if value is not None:
            return value
    return None


def _loads_object(text: str) -> JSON | None:
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _balanced_blocks(text: str) -> Iterator[str]:
    """`{...}` spans balanced outside of JSON strings, by start position (the first MAX_BLOCKS starts)."""
    plain, _ = _blanked(text)
    start = plain.find("{")
    for _ in range(MAX_BLOCKS):
        if start == -1:
            return
        depth = 0
        for i in range(start, len(plain)):
            if plain[i] == "{":
                depth += 1
            elif plain[i] == "}":
                depth -= 1
                if depth == 0:
                    yield text[start : i + 1]
                    break
        start = plain.find("{", start + 1)


def _blanked(text: str) -> tuple[str, bool]:
    """`text` with every character inside a JSON string (its quotes kept) made a space, so that
    its brackets are only the structure's; and whether it ends inside a string."""
    out: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            out.append('"' if not in_string else " ")
        else:
            in_string = ch == '"'
            out.append(ch)
    return "".join(out), in_string


def closed(text: str) -> str:
    """`text` with the closing brackets it lacks at its end appended, when it stops right after a
    complete value with only brackets left open (a small model often ends `{"a": [1, 2]` there);
    otherwise `text` as it is."""
    plain, in_string = _blanked(text)
    opened: list[str] = []
    for ch in plain:
        if ch in "{[":
            opened.append("}" if ch == "{" else "]")
        elif ch in "}]" and (not opened or opened.pop() != ch):
            return text
    if in_string or not opened or not text.endswith(("}", "]", '"')):
        return text
    return text + "".join(reversed(opened))
