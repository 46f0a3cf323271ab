"""A SessionStore in memory: the port the use cases need from storage, for tests of the use cases
alone (no database, no pipeline)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from evigate.server.usecases.records import CaseRecord, InvocationRecord, SessionRecord, TraceRecord
from evigate.storage.records import FeedbackOutcome

AT = datetime(2026, 7, 8, 21, 30, tzinfo=UTC)


def session(session_id: str, status: str = "SUCCESS", feedback: str | None = None) -> SessionRecord:
    return SessionRecord(
        session_id, "payment-service 的 CPU 告警？", "zh", status, "answer", feedback, None, AT, AT,
        None, None, None, None, None, "tests",
    )  # fmt: skip


def invocation(inv_id: int, session_id: str, tool: str, refs: list[dict[str, str]]) -> InvocationRecord:
    details = {"evidence_status": "supported", "evidence_refs": refs}
    return InvocationRecord(inv_id, session_id, tool, {}, "success", None, None, details, 1.0, AT)


@dataclass
class FakeStore:
    sessions: dict[str, SessionRecord] = field(default_factory=dict)
    invocations: dict[str, list[InvocationRecord]] = field(default_factory=dict)
    cases: dict[str, CaseRecord] = field(default_factory=dict)
    case_of: dict[str, str] = field(default_factory=dict)  # session id → case id
    trace_reads: int = 0
    feedback: list[tuple[str, str]] = field(default_factory=list)
    notes: dict[str, tuple[str, str]] = field(default_factory=dict)  # session id → (feedback, note)

    async def get_session(self, session_id: str) -> SessionRecord | None:
        return self.sessions.get(session_id)

    async def get_trace(self, session_id: str) -> TraceRecord | None:
        self.trace_reads += 1
        record = self.sessions.get(session_id)
        if record is None:
            return None
        return TraceRecord(record, [], self.invocations.get(session_id, []), self.case_of.get(session_id))

    async def get_case(self, case_id: str) -> CaseRecord | None:
        return self.cases.get(case_id)

    async def list_invocations(self, session_id: str) -> list[InvocationRecord]:
        return self.invocations.get(session_id, [])

    async def submit_feedback(self, session_id: str, feedback: str) -> FeedbackOutcome:
        self.feedback.append((session_id, feedback))
        if feedback != "useful":
            return FeedbackOutcome(None, False)
        known = self.case_of.get(session_id)
        self.case_of[session_id] = case_id = known or f"case-{len(self.case_of) + 1}"
        return FeedbackOutcome(case_id, known is None)

    async def record_feedback_note(self, session_id: str, feedback: str, note: str) -> None:
        self.notes[session_id] = (feedback, note)

    async def list_sessions(
        self, feedback: str | None, status: str | None, page_size: int, page_token: str | None
    ) -> tuple[list[SessionRecord], str | None]:
        found = [
            s
            for s in reversed(self.sessions.values())
            if (feedback is None or s.feedback == feedback) and (status is None or s.status == status)
        ]
        start = int(page_token or 0)
        end = start + page_size
        return found[start:end], str(end) if end < len(found) else None

    async def list_cases(self, limit: int = 1000) -> list[CaseRecord]:
        return list(self.cases.values())[:limit]
