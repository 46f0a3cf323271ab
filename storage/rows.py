"""Row → record conversion and the opaque page token."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Row, Table

from evigate.storage.errors import InvalidPageToken
from evigate.storage.models import CaseLibrary, DiagnosisRound, DiagnosisSession, Job, ToolInvocation
from evigate.storage.records import (
    CaseRecord,
    InvocationRecord,
    JobRecord,
    JsonDict,
    RoundRecord,
    SessionRecord,
)

AnyRow = Row[*tuple[Any, ...]]

SESSION = cast(Table, DiagnosisSession.__table__)
INVOCATION = cast(Table, ToolInvocation.__table__)
CASE = cast(Table, CaseLibrary.__table__)
ROUND = cast(Table, DiagnosisRound.__table__)
JOB = cast(Table, Job.__table__)

SESSION_COLUMNS = [c for c in SESSION.c if c.name != "id"]
ROUND_COLUMNS = [c for c in ROUND.c if c.name not in ("session_id", "created_at", "updated_at")]


def _dict(value: Any) -> JsonDict | None:
    return value if isinstance(value, dict) else None


def session_record(row: AnyRow) -> SessionRecord:
    m = row._mapping
    return SessionRecord(
        session_id=m["session_id"],
        query=m["query"],
        language=m["language"],
        status=m["status"],
        answer=m["answer"],
        feedback=m["feedback"],
        failure_reason=m["failure_reason"],
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        self_evaluation=_dict(m["self_evaluation"]),
        planner_plan=_dict(m["planner_plan"]),
        meta=_dict(m["meta"]),
        composer_output=_dict(m["composer_output"]),
        extras=_dict(m["extras"]),
        owner=m["owner"],
    )


def invocation_record(row: AnyRow) -> InvocationRecord:
    m = row._mapping
    return InvocationRecord(
        id=m["id"],
        session_id=m["session_id"],
        tool_name=m["tool_name"],
        arguments=_dict(m["arguments"]) or {},
        status=m["status"],
        error=m["error"],
        raw_result=_dict(m["raw_result"]),
        # Rows from before V003 have no retrieval details: {} (no evidence_refs) for them.
        retrieval_details=_dict(m["retrieval_details"]) or {},
        latency_ms=float(m["latency_ms"]),
        created_at=m["created_at"],
    )


def round_record(row: AnyRow) -> RoundRecord:
    m = row._mapping
    return RoundRecord(
        round=m["round"],
        executor_raw_text=m["executor_raw_text"],
        executor_output=_dict(m["executor_output"]),
        parse_status=_dict(m["parse_status"]) or {},
        gatekeeper_result=_dict(m["gatekeeper_result"]),
        verdict=_dict(m["verdict"]),
        proposed_verdict=m["proposed_verdict"],
        verdict_override_reason=m["verdict_override_reason"],
        retry_context=_dict(m["retry_context"]),
    )


def case_record(row: AnyRow) -> CaseRecord:
    m = row._mapping
    return CaseRecord(
        case_id=m["case_id"],
        diagnosis_id=m["diagnosis_id"],
        source_type=m["source_type"],
        fault_category=m["fault_category"],
        title=m["title"],
        root_cause=m["root_cause"],
        solution=m["solution"],
        created_by=m["created_by"],
        created_at=m["created_at"],
        retired_at=m.get("retired_at"),
        error_code=m.get("error_code"),
        services=_strings(m.get("services")),
        alert_names=_strings(m.get("alert_names")),
    )


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def job_record(row: AnyRow) -> JobRecord:
    m = row._mapping
    return JobRecord(
        id=m["id"],
        kind=m["kind"],
        session_id=m["session_id"],
        attempts=m["attempts"],
        payload=_dict(m["payload"]) or {},
    )


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def encode_page_token(created_at: datetime, row_id: int, filters: list[str | None]) -> str:
    body = json.dumps({"c": created_at.isoformat(), "i": row_id, "f": filters}, separators=(",", ":"))
    return base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def decode_page_token(token: str, filters: list[str | None]) -> tuple[datetime, int]:
    """The position after which the next page starts. The token also carries the filters it was
    issued for: reusing it with other filters would silently skip or repeat rows."""
    try:
        padded = token + "=" * (-len(token) % 4)
        body = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        created_at = datetime.fromisoformat(body["c"])
        row_id = body["i"]
        issued_for = body["f"]
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError) as exc:
        raise InvalidPageToken("page token is not one this service issued") from exc
    if not isinstance(row_id, int) or isinstance(row_id, bool) or created_at.tzinfo is None:
        raise InvalidPageToken("page token is not one this service issued")
    if not INT64_MIN <= row_id <= INT64_MAX:  # the drivers raise OverflowError binding it
        raise InvalidPageToken("page token is not one this service issued")
    if issued_for != filters:
        raise InvalidPageToken("page token was issued for different filters")
    return created_at, row_id
