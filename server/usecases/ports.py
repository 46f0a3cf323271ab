"""What the use cases need from the layers below, as small protocols: the session store (storage's
Repository implements it) and an observer of finished work (the gRPC front end's metrics)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from evigate.storage.records import CaseRecord, FeedbackOutcome, InvocationRecord, SessionRecord, TraceRecord


class SessionStore(Protocol):
    async def get_session(self, session_id: str) -> SessionRecord | None: ...

    async def get_trace(self, session_id: str) -> TraceRecord | None: ...

    async def get_case(self, case_id: str) -> CaseRecord | None: ...

    async def list_invocations(self, session_id: str) -> list[InvocationRecord]: ...

    async def submit_feedback(self, session_id: str, feedback: str) -> FeedbackOutcome: ...

    async def record_feedback_note(self, session_id: str, feedback: str, note: str) -> None: ...

    async def list_sessions(
        self, feedback: str | None, status: str | None, page_size: int, page_token: str | None
    ) -> tuple[list[SessionRecord], str | None]: ...

    async def list_cases(self, limit: int = 1000) -> list[CaseRecord]: ...


class ChatObserver(Protocol):
    """Told of every stage event, of each session that ran to its end here, and of each SUCCESS
    handed to its caller."""

    def on_event(self, kind: str, data: Any) -> None: ...

    def on_finished(self, status: str, stage_latencies: Sequence[Any], answer_check: Any) -> None: ...

    def on_delivered(self, session_id: str) -> None:
        """A SUCCESS reached the caller."""
        ...
