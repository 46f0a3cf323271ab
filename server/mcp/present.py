"""The use cases' results as the JSON an agent reads: plain objects, times as RFC 3339 strings."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from evigate.server.usecases.agent_queries import QueryOutcome
from evigate.server.usecases.chat import ChatOutcome
from evigate.server.usecases.records import CaseRecord, SessionRecord, TraceRecord

JSON = dict[str, Any]


def trace_uri(session_id: str) -> str:
    """The session's trace as an MCP resource."""
    return f"evigate://sessions/{session_id}/trace"


def plain(value: Any) -> Any:
    """Records (dataclasses) and times made JSON."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def diagnosis(outcome: ChatOutcome, viewer_url: str | None) -> JSON:
    """diagnose: the answer as sentences with their claim ids, the verdict, the claims with their
    citations, the Gatekeeper's decision, and where to read the trace."""
    result = outcome.result
    composer = result.composer_output or {}
    verdict = result.verdict or {}
    gatekeeper = result.gatekeeper_result or {}
    evidence = result.evidence or {}
    reply: JSON = {
        "session_id": result.session_id,
        "status": result.status,
        "answer": result.answer,
        "language": composer.get("language", ""),
        "sentences": [
            {
                "text": s.get("text", ""),
                "kind": s.get("kind"),
                "claim_ids": list(s.get("claim_ids") or []),
                "hypothesis_ids": list(s.get("hypothesis_ids") or []),
            }
            for s in composer.get("sentences") or []
            if isinstance(s, Mapping)
        ],
        "verdict": verdict.get("verdict"),
        "groundedness_score": verdict.get("groundedness_score"),
        "gatekeeper_decision": gatekeeper.get("decision"),
        "claims": plain(evidence.get("claims") or []),
        "failure_reason": result.failure_reason,
        "trace_uri": trace_uri(result.session_id),
    }
    if viewer_url:
        reply["trace_url"] = f"{viewer_url.rstrip('/')}/sessions/{result.session_id}"
    return reply


def session(record: SessionRecord) -> JSON:
    return {
        "session_id": record.session_id,
        "query": record.query,
        "status": record.status,
        "feedback": record.feedback,
        "failure_reason": record.failure_reason,
        "answer": record.answer,
        "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
    }


def case(record: CaseRecord) -> JSON:
    return dict(plain(record))


def trace(record: TraceRecord) -> JSON:
    """The whole stored trace: the session, each Verifier round, each tool call, the case."""
    return dict(plain(record))


def query(outcome: QueryOutcome) -> JSON:
    """A query tool's call: what to cite (session, invocation id, the refs' paths) and the result."""
    return {
        "session_id": outcome.session_id,
        "invocation_id": outcome.invocation_id,
        "tool_name": outcome.tool_name,
        "status": outcome.status,
        "error": outcome.error,
        "evidence_status": outcome.retrieval_details.get("evidence_status"),
        "evidence_refs": plain(outcome.retrieval_details.get("evidence_refs") or []),
        "result": plain(outcome.raw_result),
    }


def check(result: JSON) -> JSON:
    """check_claims: the decision (NONE, LOW_CONFID or REJECT: the worst failure's severity), and
    each binding with its status and the rules that failed it, each rule with its description."""
    issues = [*result.get("errors", []), *result.get("warnings", [])]
    described = {rule["id"]: rule["description"] for rule in result.get("rules", [])}
    bindings = []
    for binding in result.get("checked_bindings", []):
        at = [
            i["rule_id"]
            for i in issues
            if i.get("claim_id") == binding["claim_id"] and i.get("binding_index") == binding["binding_index"]
        ]
        bindings.append({**binding, "rules": at})
    return {
        "decision": str(result.get("severity", "")).upper(),
        "status": str(result.get("status", "")).upper(),
        "rule_set_version": result.get("rule_set_version"),
        "bindings": bindings,
        "failed_rules": [
            {"id": rule, "description": described.get(rule, "")} for rule in result.get("failed_rules", [])
        ],
        "errors": result.get("errors", []),
        "warnings": result.get("warnings", []),
    }
