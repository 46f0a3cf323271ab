"""Parse the Executor's raw text into the executor_evidence_v2 contract, never raising."""

from __future__ import annotations

import json
from typing import Any

from evigate.server.codec import CodecError, from_seed
from evigate.server.jsontext import find_json_object
from evigate.v1 import evidence_pb2

JSON = dict[str, Any]


def parse_executor_output(raw_text: str) -> tuple[JSON, JSON]:
    """Returns (structured output, parse status). The structured output is the JSON object the
    Executor wrote (possibly contract-breaking: the Gatekeeper judges it) or {} when there is none;
    the parse status is {"status": "valid"|"invalid", "detail": ...}."""
    data = find_json_object(raw_text)
    if data is None:
        return {}, {"status": "invalid", "detail": _no_object_detail(raw_text)}
    try:
        from_seed(evidence_pb2.ExecutorEvidence, data)
    except CodecError as error:
        return data, {"status": "invalid", "detail": f"contract violation: {error}"}
    return data, {"status": "valid", "detail": "parsed executor evidence contract"}


def _no_object_detail(raw_text: str) -> str:
    """Why nothing parsed: says what json.loads reports for the text, when it looks like JSON."""
    text = raw_text.strip()
    if not text:
        return "the executor output is empty"
    if "{" not in text:
        return "no JSON object in the executor output"
    try:
        json.loads(text[text.index("{") :])
    except json.JSONDecodeError as error:
        return f"malformed JSON: {error}"
    except RecursionError:
        return "malformed JSON: nested too deeply"
    return "the executor output holds no JSON object"
