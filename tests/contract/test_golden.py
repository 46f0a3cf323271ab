"""Every JSON example of the two source documents parses into its proto message and back.

Semantic identity (what "serialises back to the same JSON" means here):
    Two seed documents of message type T are semantically identical when, after *normalising*
    both, their canonical JSON texts (sorted keys, no whitespace) are equal. Normalising walks the
    document along T's descriptor and, in every message object, drops a key whose value is
    - JSON null, or
    - the proto default of that field: ``""``, ``0``, ``0.0``, ``false`` for scalars, ``[]`` for
      repeated fields, ``{}`` for maps.
    So null, absent and the proto default are equal. Everything else is exact: number types
    (``1`` is not ``1.0``, ``true`` is not ``1``), string contents, list order, and whether a message
    field is present — ``"gatekeeper_result": {}`` (set, empty) differs from an absent one.
    Struct / Value contents are compared as they are (no dropping inside them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from evigate.server.codec import KeyStyle, from_seed, to_seed
from evigate.v1 import (
    evidence_pb2,
    feedback_service_pb2,
    gatekeeper_pb2,
    tool_pb2,
    verdict_pb2,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

# file → (message type, key style); the source section it comes from in the comment.
CASES: dict[str, tuple[type[Message], KeyStyle]] = {
    "planner_plan.json": (evidence_pb2.PlannerPlan, "snake"),  # contracts §1
    "executor_evidence_v2.json": (evidence_pb2.ExecutorEvidence, "snake"),  # contracts §2.1
    "claim_negative_observation.json": (evidence_pb2.Claim, "snake"),  # contracts §2.3
    "retrieval_details_positive.json": (tool_pb2.RetrievalDetails, "snake"),  # contracts §3.1
    "retrieval_details_negative.json": (tool_pb2.RetrievalDetails, "snake"),  # contracts §3.2
    "gatekeeper_result.json": (gatekeeper_pb2.GatekeeperResult, "snake"),  # contracts §4.2
    "verifier_input.json": (verdict_pb2.VerifierInput, "snake"),  # contracts §5
    "verifier_output.json": (verdict_pb2.Verdict, "snake"),  # contracts §5
    "composer_output.json": (verdict_pb2.ComposerOutput, "snake"),  # contracts §6
    "composer_output_sentences.json": (verdict_pb2.ComposerOutput, "snake"),  # the structured answer
    "verifier_evaluation_trace.json": (verdict_pb2.SelfEvaluation, "snake"),  # contracts §7
    "self_evaluation.json": (verdict_pb2.SelfEvaluation, "snake"),  # score/feedback §2
    "feedback_request_useful.json": (feedback_service_pb2.SubmitFeedbackRequest, "camel"),  # §3
    "feedback_request_not_useful.json": (feedback_service_pb2.SubmitFeedbackRequest, "camel"),
    "feedback_response.json": (feedback_service_pb2.SubmitFeedbackResponse, "camel"),
    "feedback_response_no_case.json": (feedback_service_pb2.SubmitFeedbackResponse, "camel"),
}

_WELL_KNOWN_JSON = {
    "google.protobuf.Struct",
    "google.protobuf.Value",
    "google.protobuf.ListValue",
    "google.protobuf.Timestamp",
    "google.protobuf.Duration",
}


def _is_default(field: FieldDescriptor, value: Any) -> bool:
    if value is None:
        return True
    if field.is_repeated:
        return bool(value in ([], {}))
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return False  # a present message is never "default": set-but-empty is kept
    if field.type == FieldDescriptor.TYPE_BOOL:
        return value is False
    if field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        return isinstance(value, str) and not value
    if field.type == FieldDescriptor.TYPE_ENUM:
        return False  # enum defaults are null (the _UNSPECIFIED value has no word)
    return type(value) in (int, float) and bool(value == 0)


def normalise(desc: Descriptor, data: Any) -> Any:
    """Drop null / default-valued keys along ``desc`` (see the module docstring)."""
    if desc.full_name in _WELL_KNOWN_JSON or not isinstance(data, Mapping):
        return data
    by_key = {f.name: f for f in desc.fields} | {f.json_name: f for f in desc.fields}
    out: dict[str, Any] = {}
    for key, value in data.items():
        field = by_key.get(key)
        if field is None:
            out[key] = value  # unknown keys stay, so they make a difference
            continue
        if _is_default(field, value):
            continue
        out[key] = _normalise_field(field, value)
    return out


def _normalise_field(field: FieldDescriptor, value: Any) -> Any:
    sub = field.message_type
    if field.type != FieldDescriptor.TYPE_MESSAGE or sub is None:
        return value
    if sub.GetOptions().map_entry:
        value_desc = sub.fields_by_name["value"].message_type
        return value if value_desc is None else {k: normalise(value_desc, v) for k, v in value.items()}
    if field.is_repeated:
        return [normalise(sub, v) for v in value]
    return normalise(sub, value)


def descriptor(message_class: type[Message]) -> Descriptor:
    return cast(Descriptor, message_class.DESCRIPTOR)


def canonical(desc: Descriptor, data: Any) -> str:
    return json.dumps(normalise(desc, data), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def test_every_golden_file_has_a_case() -> None:
    on_disk = {p.name for p in GOLDEN.glob("*.json")}
    assert on_disk == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_round_trip(name: str) -> None:
    message_class, key_style = CASES[name]
    original = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    message = from_seed(message_class, original, key_style=key_style)
    emitted = to_seed(message, key_style=key_style)
    desc = descriptor(message_class)
    assert canonical(desc, emitted) == canonical(desc, original)
    # The emitted JSON is itself stable: parsing it again gives the same message.
    assert from_seed(message_class, emitted, key_style=key_style) == message
    # And it survives the binary wire.
    assert message_class.FromString(message.SerializeToString()) == message


def test_golden_shape_is_the_documents() -> None:
    """Spot checks that the emitted shape is the documents' own, not protobuf's JSON mapping."""
    data = json.loads((GOLDEN / "executor_evidence_v2.json").read_text(encoding="utf-8"))
    emitted = to_seed(from_seed(evidence_pb2.ExecutorEvidence, data))
    binding = emitted["claims"][0]["evidence_bindings"][0]
    assert emitted["claims"][0]["claim_type"] == "observation"
    assert emitted["claims"][0]["support_level"] == "direct"
    assert binding["source_invocation_id"] == 517  # int64 as a number, not "517"
    verdict = to_seed(from_seed(verdict_pb2.Verdict, {"verdict": "LOW_CONFID"}))
    assert verdict["verdict"] == "LOW_CONFID"
    feedback = to_seed(
        from_seed(
            feedback_service_pb2.SubmitFeedbackRequest,
            {"sessionId": "s", "feedback": "useful"},
            key_style="camel",
        ),
        key_style="camel",
    )
    assert feedback == {"sessionId": "s", "feedback": "useful"}


def test_semantic_identity_is_strict_where_it_should_be() -> None:
    desc = descriptor(verdict_pb2.Verdict)
    assert canonical(desc, {"rationale": None}) == canonical(desc, {"rationale": ""}) == canonical(desc, {})
    assert canonical(desc, {"groundedness_score": 1}) != canonical(desc, {"groundedness_score": 1.0})
    inp = descriptor(verdict_pb2.VerifierInput)
    assert canonical(inp, {"gatekeeper_result": {}}) != canonical(inp, {})
    assert canonical(inp, {"gatekeeper_result": {"rules": []}}) == canonical(inp, {"gatekeeper_result": {}})
