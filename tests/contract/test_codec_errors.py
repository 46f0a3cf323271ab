"""The codec rejects seed JSON that does not fit the contract, naming the exact field path."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from google.protobuf.message import Message

from evigate.server.codec import CodecError, KeyStyle, check_enums, from_seed, to_seed
from evigate.v1 import (
    chat_service_pb2,
    evidence_pb2,
    feedback_service_pb2,
    gatekeeper_pb2,
    session_pb2,
    tool_pb2,
    verdict_pb2,
)


class Case(NamedTuple):
    id: str
    message_class: type[Message]
    data: Any
    path: str
    key_style: KeyStyle = "snake"


def _binding(**overrides: Any) -> dict[str, Any]:
    binding: dict[str, Any] = {
        "tool_name": "query_logs",
        "source_invocation_id": 517,
        "raw_path": "$.logs[0]",
        "evidence_excerpt": "x",
    }
    return binding | overrides


def _evidence(second_binding: dict[str, Any], **claim: Any) -> dict[str, Any]:
    first = {"claim_id": "claim-1", "claim_type": "observation", "support_level": "direct"}
    return {
        "answer_version": "executor_evidence_v2",
        "claims": [first | claim | {"evidence_bindings": [_binding(), second_binding]}],
    }


EE = evidence_pb2.ExecutorEvidence
CASES = [
    # unknown fields
    Case("forbidden-top-level", EE, {"diagnosis_summary": "x"}, "diagnosis_summary"),
    Case("unknown-in-binding", EE, _evidence(_binding(bogus=1)), "claims[0].evidence_bindings[1].bogus"),
    Case(
        "plural-ids-field",
        EE,
        _evidence(_binding(source_invocation_ids=[1])),
        "claims[0].evidence_bindings[1].source_invocation_ids",
    ),
    Case(
        "camel-key-in-snake-style",
        feedback_service_pb2.SubmitFeedbackRequest,
        {"sessionId": "s"},
        "sessionId",
    ),
    Case(
        "key-given-twice-in-camel-style",
        feedback_service_pb2.SubmitFeedbackRequest,
        {"session_id": "a", "sessionId": "b"},
        "sessionId",
        "camel",
    ),
    Case(
        "unknown-in-camel-style",
        feedback_service_pb2.SubmitFeedbackResponse,
        {"caseID": "x"},
        "caseID",
        "camel",
    ),
    Case(
        "unknown-in-empty-nested",
        verdict_pb2.SelfEvaluation,
        {"verifier_evaluation": {"gatekeeper_result": {"ruleset": "v1"}}},
        "verifier_evaluation.gatekeeper_result.ruleset",
    ),
    # wrong JSON types
    Case("raw-path-number", EE, _evidence(_binding(raw_path=0)), "claims[0].evidence_bindings[1].raw_path"),
    Case(
        "int64-as-string",
        EE,
        _evidence(_binding(source_invocation_id="517")),
        "claims[0].evidence_bindings[1].source_invocation_id",
    ),
    Case(
        "int64-as-bool",
        EE,
        _evidence(_binding(source_invocation_id=True)),
        "claims[0].evidence_bindings[1].source_invocation_id",
    ),
    Case(
        "int64-as-float",
        EE,
        _evidence(_binding(source_invocation_id=517.0)),
        "claims[0].evidence_bindings[1].source_invocation_id",
    ),
    Case(
        "int64-out-of-range",
        EE,
        _evidence(_binding(source_invocation_id=2**63)),
        "claims[0].evidence_bindings[1].source_invocation_id",
    ),
    Case("int32-out-of-range", verdict_pb2.Verdict, {"critical_fact_count": 2**31}, "critical_fact_count"),
    Case("double-as-string", verdict_pb2.Verdict, {"groundedness_score": "1.0"}, "groundedness_score"),
    Case("double-as-bool", verdict_pb2.Verdict, {"groundedness_score": True}, "groundedness_score"),
    Case("bool-as-string", gatekeeper_pb2.RuleInfo, {"enabled": "true"}, "enabled"),
    Case("bool-as-int", gatekeeper_pb2.RuleInfo, {"enabled": 1}, "enabled"),
    Case("repeated-as-string", EE, {"missing_info": "logs"}, "missing_info"),
    Case("repeated-item-type", EE, {"missing_info": ["ok", 3]}, "missing_info[1]"),
    Case("repeated-as-object", EE, {"claims": {"claim_id": "c"}}, "claims"),
    Case("message-as-array", EE, {"claims": [{}, []]}, "claims[1]"),
    Case("message-as-string", verdict_pb2.VerifierInput, {"gatekeeper_result": "pass"}, "gatekeeper_result"),
    Case("root-not-object", evidence_pb2.Claim, [], ""),
    Case("timestamp-garbage", session_pb2.DiagnosisSession, {"create_time": "yesterday"}, "create_time"),
    Case("timestamp-as-number", session_pb2.DiagnosisSession, {"update_time": 1720000000}, "update_time"),
    Case("struct-as-string", tool_pb2.ToolInvocation, {"arguments": "service=x"}, "arguments"),
    Case(
        "struct-nested-non-json",
        tool_pb2.ToolInvocation,
        {"raw_result": {"logs": [{"t": {1, 2}}]}},
        "raw_result.logs[0].t",
    ),
    Case(
        "map-value-type",
        session_pb2.Trace,
        {"prompt_versions": {"executor": 1}},
        'prompt_versions["executor"]',
    ),
    Case("map-as-array", session_pb2.Trace, {"prompt_versions": [["executor", "v1"]]}, "prompt_versions"),
    Case("two-oneof-members", chat_service_pb2.StreamChatResponse, {"plan": {}, "verdict": {}}, "verdict"),
    # unknown enum words
    Case("claim-type-unknown", EE, _evidence(_binding(), claim_type="fact"), "claims[0].claim_type"),
    Case(
        "claim-type-proto-name",
        EE,
        _evidence(_binding(), claim_type="CLAIM_TYPE_OBSERVATION"),
        "claims[0].claim_type",
    ),
    Case(
        "claim-type-uppercase-word",
        EE,
        _evidence(_binding(), claim_type="OBSERVATION"),
        "claims[0].claim_type",
    ),
    Case("claim-type-number", EE, _evidence(_binding(), claim_type=1), "claims[0].claim_type"),
    Case(
        "support-level-unknown", EE, _evidence(_binding(), support_level="strong"), "claims[0].support_level"
    ),
    Case("verdict-lowercase", verdict_pb2.Verdict, {"verdict": "pass"}, "verdict"),
    Case("gatekeeper-status-uppercase", gatekeeper_pb2.GatekeeperResult, {"status": "PASS"}, "status"),
    Case("severity-unknown", gatekeeper_pb2.GatekeeperResult, {"severity": "warning"}, "severity"),
    Case(
        "checked-binding-status",
        verdict_pb2.VerifierInput,
        {"gatekeeper_result": {"checked_bindings": [{"status": "ok"}]}},
        "gatekeeper_result.checked_bindings[0].status",
    ),
    Case("match-level-lowercase-l0", tool_pb2.RetrievalDetails, {"match_level": "l0"}, "match_level"),
    Case("match-level-uppercase-none", tool_pb2.RetrievalDetails, {"match_level": "NONE"}, "match_level"),
    Case("session-status-lowercase", session_pb2.DiagnosisSession, {"status": "running"}, "status"),
    Case(
        "feedback-uppercase",
        feedback_service_pb2.SubmitFeedbackRequest,
        {"feedback": "USEFUL"},
        "feedback",
        "camel",
    ),
    Case(
        "feedback-bad-case",
        feedback_service_pb2.SubmitFeedbackRequest,
        {"feedback": "bad_case"},
        "feedback",
        "camel",
    ),
    Case(
        "deep-enum",
        verdict_pb2.SelfEvaluation,
        {
            "verifier_evaluation_rounds": [
                {},
                {"executor_structured_output": {"claims": [{"claim_type": "guess"}]}},
            ]
        },
        "verifier_evaluation_rounds[1].executor_structured_output.claims[0].claim_type",
    ),
    # "_unspecified"-ish words: the zero value never has a word
    Case("unspecified-lower", EE, _evidence(_binding(), claim_type="unspecified"), "claims[0].claim_type"),
    Case("unspecified-upper", verdict_pb2.Verdict, {"verdict": "UNSPECIFIED"}, "verdict"),
    Case("unspecified-full-name", verdict_pb2.Verdict, {"verdict": "VERDICT_LABEL_UNSPECIFIED"}, "verdict"),
    Case(
        "unspecified-full-lower",
        EE,
        _evidence(_binding(), claim_type="claim_type_unspecified"),
        "claims[0].claim_type",
    ),
    Case("unspecified-severity", gatekeeper_pb2.GatekeeperResult, {"severity": "unspecified"}, "severity"),
    Case("unspecified-match-level", tool_pb2.RetrievalDetails, {"match_level": "unspecified"}, "match_level"),
    Case("unspecified-session-status", session_pb2.DiagnosisSession, {"status": "UNSPECIFIED"}, "status"),
    Case(
        "unspecified-feedback",
        feedback_service_pb2.SubmitFeedbackRequest,
        {"feedback": "unspecified"},
        "feedback",
        "camel",
    ),
    Case("empty-word", tool_pb2.RetrievalDetails, {"evidence_status": ""}, "evidence_status"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rejected_with_exact_path(case: Case) -> None:
    with pytest.raises(CodecError) as info:
        from_seed(case.message_class, case.data, key_style=case.key_style)
    assert info.value.path == case.path
    assert str(info.value).startswith(f"{case.path or '<root>'}: ")


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


def test_null_means_unset_everywhere() -> None:
    """JSON null is not a type error: optional → unset, message → unset, other → proto default."""
    data = {
        "claims": [{"claim_type": None, "evidence_bindings": [_binding(source_invocation_id=None)]}],
        "missing_info": None,
        "answer_version": None,
    }
    message = from_seed(EE, data)
    assert not message.claims[0].evidence_bindings[0].HasField("source_invocation_id")
    assert to_seed(message)["claims"][0]["evidence_bindings"][0]["source_invocation_id"] is None
    assert from_seed(verdict_pb2.VerifierInput, {"retry_context": None}).HasField("retry_context") is False


def test_unnamed_enum_number_cannot_be_emitted() -> None:
    claim = evidence_pb2.Claim(claim_type=99)  # type: ignore[arg-type]
    with pytest.raises(CodecError) as info:
        to_seed(claim)
    assert info.value.path == "claim_type"


def test_unnamed_enum_number_path_is_full() -> None:
    evidence = evidence_pb2.ExecutorEvidence()
    evidence.claims.add()
    evidence.claims.add().claim_type = 7  # type: ignore[assignment]
    with pytest.raises(CodecError) as info:
        to_seed(evidence)
    assert info.value.path == "claims[1].claim_type"


@pytest.mark.parametrize("field", ["claim_type", "support_level"])
def test_check_enums_finds_what_to_seed_refuses_without_building_the_dict(field: str) -> None:
    evidence = evidence_pb2.ExecutorEvidence()
    for _ in range(3):
        evidence.claims.add().evidence_bindings.add(evidence_excerpt="x")
    check_enums(evidence)  # every enum named (or unset): nothing to refuse
    to_seed(evidence)
    setattr(evidence.claims[2], field, 77)
    with pytest.raises(CodecError) as emitted:
        to_seed(evidence)
    with pytest.raises(CodecError) as checked:
        check_enums(evidence)
    assert (checked.value.path, checked.value.reason) == (emitted.value.path, emitted.value.reason)
    assert checked.value.path == f"claims[2].{field}"
