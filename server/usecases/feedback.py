"""SubmitFeedback (docs/design.md, the feedback loop): `useful` makes the answer a case of the case
library, idempotently across calls and replicas; `not_useful` records the judgement; neither
changes the session's status. Every feedback drops the session's cached trace here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evigate.server.usecases.ports import SessionStore


@dataclass(frozen=True)
class FeedbackResult:
    case_id: str | None  # the case of a useful answer; None for not_useful


class FeedbackUseCase:
    def __init__(self, store: SessionStore, invalidate: Callable[[str], None] | None = None) -> None:
        self._store = store
        self._invalidate = invalidate  # drops the session's cached trace

    async def submit(self, session_id: str, feedback: str) -> FeedbackResult:
        """feedback: "useful" | "not_useful" (validated by the front end)."""
        try:
            outcome = await self._store.submit_feedback(session_id, feedback)
        finally:
            if self._invalidate is not None:
                self._invalidate(session_id)
        return FeedbackResult(case_id=outcome.case_id)
