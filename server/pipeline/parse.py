"""Parse the Executor's raw text into the executor_evidence_v2 contract, never raising."""

from __future__ import annotations

import json
import re
from typing import Any

from evigate.v1 import evidence_pb2

from server.codec import CodecError, from_seed

JSON = dict[str, Any]
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def extract_json_object(text: str) -> str | None:
    """The first balanced {...} block of `text` (code fences and prose around it are ignored)."""
    stripped = _FENCE.sub("", text.strip())
    start = stripped.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for index in range(start, len(stripped)):
            char = stripped[index]
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return stripped[start : index + 1]
        start = stripped.find("{", start + 1)
    return None


def parse_executor_output(raw_text: str) -> tuple[JSON, JSON]:
    """Returns (structured output, parse status). The structured output is the JSON object the
    Executor wrote (possibly contract-breaking: the Gatekeeper judges it) or {} when there is none;
    the parse status is {"status": "valid"|"invalid", "detail": ...}."""
    block = extract_json_object(raw_text)
    if block is None:
        return {}, {"status": "invalid", "detail": "no JSON object in the executor output"}
    try:
        data = json.loads(block)
    except json.JSONDecodeError as error:
        return {}, {"status": "invalid", "detail": f"malformed JSON: {error}"}
    if not isinstance(data, dict):
        return {}, {"status": "invalid", "detail": "the executor output is not a JSON object"}
    try:
        from_seed(evidence_pb2.ExecutorEvidence, data)
    except CodecError as error:
        return data, {"status": "invalid", "detail": f"contract violation: {error}"}
    return data, {"status": "valid", "detail": "parsed executor evidence contract"}
