"""Plain frozen records exchanged with the layers above; JSON columns travel as seed-shaped dicts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

JsonDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SessionRecord:
    session_id: str
    query: str
    language: str
    status: str
    answer: str | None
    feedback: str | None
    failure_reason: str | None
    created_at: datetime
    updated_at: datetime
    self_evaluation: JsonDict | None
    planner_plan: JsonDict | None
    meta: JsonDict | None
    composer_output: JsonDict | None
    extras: JsonDict | None
    owner: str


@dataclass(frozen=True, slots=True)
class InvocationRecord:
    id: int
    session_id: str
    tool_name: str
    arguments: JsonDict
    status: str
    error: str | None
    raw_result: JsonDict | None
    retrieval_details: JsonDict
    latency_ms: float
    created_at: datetime


@dataclass(frozen=True, slots=True)
class RoundRecord:
    round: int
    executor_raw_text: str
    executor_output: JsonDict | None
    parse_status: JsonDict
    gatekeeper_result: JsonDict | None
    verdict: JsonDict | None
    proposed_verdict: str | None
    verdict_override_reason: str
    retry_context: JsonDict | None


@dataclass(frozen=True, slots=True)
class TraceRecord:
    session: SessionRecord
    rounds: list[RoundRecord]
    invocations: list[InvocationRecord]
    case_id: str | None
    case: CaseRecord | None = None  # the case's structured fields, when the reader asked for them


@dataclass(frozen=True, slots=True)
class CaseRecord:
    case_id: str
    diagnosis_id: str
    source_type: str
    fault_category: str
    title: str
    root_cause: str
    solution: str
    created_by: str
    created_at: datetime
    retired_at: datetime | None = None
    # V014 (rules.case_facts): None / () until the case is structured.
    error_code: str | None = None
    services: tuple[str, ...] = ()
    alert_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FeedbackOutcome:
    """`case_id` is set for `useful`; `created` is True only for the call that inserted the case."""

    case_id: str | None
    created: bool


@dataclass(frozen=True, slots=True)
class JobRecord:
    id: int
    kind: str
    session_id: str | None
    attempts: int
    payload: JsonDict


@dataclass(frozen=True, slots=True)
class JobStats:
    pending: int
    running: int
    failed: int
    done: int
    oldest_pending_age_seconds: float  # 0.0 when nothing is pending
