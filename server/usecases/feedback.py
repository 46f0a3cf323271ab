"""SubmitFeedback (docs/design.md, the feedback loop): `useful` makes the answer a case of the case
library, idempotently across calls and replicas, and structures it (server.usecases.cases);
`not_useful` records the judgement; neither changes the session's status. Every feedback drops the
session's cached trace here."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from evigate.server.usecases.cases import CaseUseCase
from evigate.server.usecases.ports import SessionStore

log = logging.getLogger("evigate.feedback")


@dataclass(frozen=True)
class FeedbackResult:
    case_id: str | None  # the case of a useful answer; None for not_useful


class FeedbackUseCase:
    def __init__(
        self,
        store: SessionStore,
        invalidate: Callable[[str], None] | None = None,
        cases: CaseUseCase | None = None,
    ) -> None:
        self._store = store
        self._invalidate = invalidate  # drops the session's cached trace
        self._cases = cases  # structures a new case; None: it stays GENERAL until the back-fill

    async def submit(self, session_id: str, feedback: str, note: str | None = None) -> FeedbackResult:
        """feedback: "useful" | "not_useful" (validated by the front end). A note is kept with the
        session (its extras' `feedback_note`), after the feedback itself is recorded."""
        try:
            outcome = await self._store.submit_feedback(session_id, feedback)
            if note:
                await self._store.record_feedback_note(session_id, feedback, note)
            if outcome.created and outcome.case_id is not None and self._cases is not None:
                try:
                    await self._cases.structure(session_id, outcome.case_id)
                except Exception:  # the case exists and is found by text; the back-fill retries
                    log.exception("case structuring failed", extra={"case_id": outcome.case_id})
        finally:
            if self._invalidate is not None:
                self._invalidate(session_id)
        return FeedbackResult(case_id=outcome.case_id)
