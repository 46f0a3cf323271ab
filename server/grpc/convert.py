"""Domain records (seed-shaped dicts, storage records) → evigate.v1 messages, through server.codec.

Stored JSON is written by our own pipeline, but an Executor output may break the contract on
purpose (the Gatekeeper judges it) and older rows may predate a field: a part that does not fit
its message is left unset and logged, never turned into an error for the client.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar

from google.protobuf.message import Message

from evigate.rules.enums import SessionStatus, Verdict
from evigate.server.codec import CodecError, from_seed
from evigate.server.pipeline import ChatResult, StageEvent
from evigate.server.usecases.records import (
    CaseRecord,
    InvocationRecord,
    RoundRecord,
    SessionRecord,
    TraceRecord,
)
from evigate.v1 import (
    chat_service_pb2,
    evidence_pb2,
    gatekeeper_pb2,
    session_pb2,
    tool_pb2,
    verdict_pb2,
)

M = TypeVar("M", bound=Message)
JSON = dict[str, Any]
log = logging.getLogger("evigate.grpc.convert")

_EVENT_TYPES: dict[str, type[Message]] = {
    "plan": evidence_pb2.PlannerPlan,
    "tool_invocation": tool_pb2.ToolInvocation,
    "executor_evidence": evidence_pb2.ExecutorEvidence,
    "gatekeeper_result": gatekeeper_pb2.GatekeeperResult,
    "verdict": verdict_pb2.Verdict,
    "composer_output": verdict_pb2.ComposerOutput,
}


def lenient(message_class: type[M], data: Any, what: str) -> M | None:
    """The message, or None (logged) when the stored data does not fit it."""
    if data is None:
        return None
    try:
        return from_seed(message_class, data)
    except CodecError as error:
        log.warning("stored data does not fit the contract", extra={"part": what, "error": str(error)})
        return None


def _set(target: Message, name: str, value: Message | None) -> None:
    if value is not None:
        getattr(target, name).CopyFrom(value)


def _words(data: Mapping[str, Any], allowed: frozenset[str]) -> JSON:
    """Keeps only fields the message knows: stored rows may carry extra bookkeeping keys."""
    return {k: v for k, v in data.items() if k in allowed}


def _names(message_class: type[Message]) -> frozenset[str]:
    return frozenset(f.name for f in message_class.DESCRIPTOR.fields)


def chat_response(result: ChatResult) -> chat_service_pb2.ChatResponse:
    response = chat_service_pb2.ChatResponse(
        session_id=result.session_id,
        status=_status(result.status),
        answer=result.answer,
        failure_reason=result.failure_reason,
    )
    composer = lenient(verdict_pb2.ComposerOutput, result.composer_output, "composer")
    _set(response, "composer_output", composer)
    if composer is not None:  # the answer's sentences and language, where a client reads the answer
        response.language = composer.language
        response.answer_sentences.extend(composer.sentences)
    _set(response, "verdict", lenient(verdict_pb2.Verdict, _verdict(result.verdict), "verdict"))
    _set(
        response,
        "gatekeeper_result",
        lenient(gatekeeper_pb2.GatekeeperResult, result.gatekeeper_result, "gatekeeper"),
    )
    _set(response, "evidence", lenient(evidence_pb2.ExecutorEvidence, result.evidence, "evidence"))
    return response


def stream_event(event: StageEvent) -> chat_service_pb2.StreamChatResponse:
    out = chat_service_pb2.StreamChatResponse(session_id=event.session_id, round=event.round)
    if isinstance(event.data, ChatResult):
        out.result.CopyFrom(chat_response(event.data))
        return out
    message_class = _EVENT_TYPES.get(event.kind)
    if message_class is None:
        raise ValueError(f"unknown stage event kind {event.kind!r}")
    data = event.data
    if message_class is verdict_pb2.Verdict:
        data = _verdict(data) or {}
    message = lenient(message_class, data, event.kind)
    if message is None:
        message = message_class()  # the kind still tells the client which stage happened
    getattr(out, event.kind).CopyFrom(message)
    return out


def _verdict(data: JSON | None) -> JSON | None:
    return None if data is None else _words(data, _names(verdict_pb2.Verdict))


_STATUSES: dict[str, session_pb2.SessionStatus.ValueType] = {
    SessionStatus.RUNNING: session_pb2.SESSION_STATUS_RUNNING,
    SessionStatus.SUCCESS: session_pb2.SESSION_STATUS_SUCCESS,
    SessionStatus.FAILED: session_pb2.SESSION_STATUS_FAILED,
    SessionStatus.AGENT: session_pb2.SESSION_STATUS_AGENT,
}
_VERDICT_LABELS: dict[str, verdict_pb2.VerdictLabel.ValueType] = {
    Verdict.PASS: verdict_pb2.VERDICT_LABEL_PASS,
    Verdict.LOW_CONFID: verdict_pb2.VERDICT_LABEL_LOW_CONFID,
    Verdict.REJECT: verdict_pb2.VERDICT_LABEL_REJECT,
}


def _status(word: str) -> session_pb2.SessionStatus.ValueType:
    return _STATUSES.get(word, session_pb2.SESSION_STATUS_UNSPECIFIED)


def _feedback(word: str | None) -> session_pb2.Feedback.ValueType:
    return {"useful": session_pb2.FEEDBACK_USEFUL, "not_useful": session_pb2.FEEDBACK_NOT_USEFUL}.get(
        word or "", session_pb2.FEEDBACK_UNSPECIFIED
    )


def _verdict_label(word: Any) -> verdict_pb2.VerdictLabel.ValueType:
    return _VERDICT_LABELS.get(str(word), verdict_pb2.VERDICT_LABEL_UNSPECIFIED)


def _timestamp(target: Message, when: datetime) -> None:
    target.FromDatetime(when)  # type: ignore[attr-defined]


def diagnosis_session(record: SessionRecord, last_verdict: str | None = None) -> session_pb2.DiagnosisSession:
    out = session_pb2.DiagnosisSession(
        session_id=record.session_id,
        query=record.query,
        language=record.language,
        status=_status(record.status),
        answer=record.answer or "",
        feedback=_feedback(record.feedback),
        failure_reason=record.failure_reason or "",
    )
    _timestamp(out.create_time, record.created_at)
    _timestamp(out.update_time, record.updated_at)
    evaluation = record.self_evaluation or {}
    verifier = evaluation.get("verifier_evaluation")
    label = verifier.get("verdict") if isinstance(verifier, dict) else last_verdict
    out.verdict = _verdict_label(label)
    score = evaluation.get("evidence_score")
    if isinstance(score, int) and not isinstance(score, bool):
        out.evidence_score = score
    return out


def _round(record: RoundRecord) -> session_pb2.ExecutionRound:
    out = session_pb2.ExecutionRound(
        round=record.round,
        executor_raw_text=record.executor_raw_text,
        proposed_verdict=_verdict_label(record.proposed_verdict),
        verdict_override_reason=record.verdict_override_reason,
    )
    _set(
        out,
        "executor_output",
        lenient(evidence_pb2.ExecutorEvidence, record.executor_output or None, "round"),
    )
    _set(out, "parse_status", lenient(evidence_pb2.ExecutorOutputParseStatus, record.parse_status, "parse"))
    _set(out, "gatekeeper_result", lenient(gatekeeper_pb2.GatekeeperResult, record.gatekeeper_result, "gate"))
    _set(out, "verdict", lenient(verdict_pb2.Verdict, _verdict(record.verdict), "verdict"))
    _set(out, "retry_context", lenient(verdict_pb2.RetryContext, record.retry_context, "retry_context"))
    return out


def tool_invocation(record: InvocationRecord) -> tool_pb2.ToolInvocation:
    data = {
        "id": record.id,
        "session_id": record.session_id,
        "tool_name": record.tool_name,
        "arguments": record.arguments,
        "status": record.status,
        "error": record.error or "",
        "raw_result": record.raw_result,
        "retrieval_details": record.retrieval_details,
        "latency_ms": float(record.latency_ms),
    }
    out = lenient(tool_pb2.ToolInvocation, data, "tool_invocation")
    if out is None:  # keep the identity of the call even when its details do not fit
        out = tool_pb2.ToolInvocation(id=record.id, session_id=record.session_id, tool_name=record.tool_name)
    _timestamp(out.create_time, record.created_at)
    return out


def trace(record: TraceRecord) -> session_pb2.Trace:
    session = record.session
    last_verdict = None
    if record.rounds and record.rounds[-1].verdict:
        last_verdict = str(record.rounds[-1].verdict.get("verdict"))
    out = session_pb2.Trace(
        session=diagnosis_session(session, last_verdict),
        rounds=[_round(r) for r in record.rounds],
        tool_invocations=[tool_invocation(i) for i in record.invocations],
        feedback=_feedback(session.feedback),
        case_id=record.case_id or "",
    )
    _set(out, "planner_plan", lenient(evidence_pb2.PlannerPlan, session.planner_plan, "planner_plan"))
    _set(out, "composer_output", lenient(verdict_pb2.ComposerOutput, session.composer_output, "composer"))
    evaluation = session.self_evaluation or {}
    if evaluation.get("evidence_score") is not None:
        score = _words(evaluation, _names(verdict_pb2.EvidenceScore))
        _set(out, "evidence_score", lenient(verdict_pb2.EvidenceScore, score, "evidence_score"))
    extras = session.extras or {}
    allowed = _names(session_pb2.AnswerGuardFinding)
    for finding in extras.get("answer_guard_findings") or []:
        if isinstance(finding, dict):
            item = lenient(session_pb2.AnswerGuardFinding, _words(finding, allowed), "guard")
            if item is not None:
                out.answer_guard_findings.append(item)
    for latency in extras.get("stage_latencies") or []:
        if isinstance(latency, dict):
            item2 = lenient(session_pb2.StageLatency, latency, "stage_latency")
            if item2 is not None:
                out.stage_latencies.append(item2)
    _answer_check(out, extras.get("answer_check"))
    meta = session.meta or {}
    versions = meta.get("prompt_versions") or extras.get("prompt_versions") or {}
    if isinstance(versions, dict):
        out.prompt_versions.update({str(k): str(v) for k, v in versions.items() if v})
    out.agent_backend = str(meta.get("agent_backend") or "")
    backends = meta.get("stage_backends") or {}
    if isinstance(backends, dict):
        out.stage_backends.update({str(k): str(v) for k, v in backends.items() if v})
    for note in extras.get("stage_notes") or []:
        if isinstance(note, dict):
            out.stage_notes.add(
                stage=str(note.get("stage") or ""),
                round=int(note.get("round") or 0),
                kind=str(note.get("kind") or ""),
                detail=str(note.get("detail") or ""),
            )
    if record.case is not None:
        out.library_case.CopyFrom(case(record.case))
    return out


def case(record: CaseRecord) -> session_pb2.Case:
    out = session_pb2.Case(
        case_id=record.case_id,
        session_id=record.diagnosis_id,
        source_type=record.source_type,
        fault_category=record.fault_category,
        error_code=record.error_code or "",
        services=list(record.services),
        alert_names=list(record.alert_names),
        title=record.title,
        retired=record.retired_at is not None,
    )
    _timestamp(out.create_time, record.created_at)
    return out


def _answer_check(out: session_pb2.Trace, record: Any) -> None:
    """The answer check's rejections and the answer's source, from the session extras."""
    if not isinstance(record, dict):
        return
    out.answer_source = str(record.get("answer_source") or "")
    for rejection in record.get("rejections") or []:
        if not isinstance(rejection, dict):
            continue
        item = out.answer_check_rejections.add(attempt=int(rejection.get("attempt") or 0))
        composer = lenient(verdict_pb2.ComposerOutput, rejection.get("composer_output"), "rejected composer")
        if composer is not None:
            item.composer_output.CopyFrom(composer)
        for violation in rejection.get("violations") or []:
            if isinstance(violation, dict):
                item.violations.add(**{k: str(violation.get(k) or "") for k in _VIOLATION_FIELDS})


_VIOLATION_FIELDS = ("rule_id", "field", "token", "message")
