"""Feedback on a session and the case library it feeds: `useful` makes (or re-activates) the
session's case, `not_useful` retires it (docs/design.md §7). A mixin of
storage.repository.Repository; each public method is one transaction (storage.runner)."""

from __future__ import annotations

import uuid

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import BindParameter

from evigate.storage.errors import NoAnswer, SessionNotFound
from evigate.storage.records import CaseRecord, FeedbackOutcome
from evigate.storage.rows import CASE, SESSION, case_record
from evigate.storage.runner import Runner
from evigate.storage.sessions import update_or_missing
from evigate.storage.types import utcnow

USEFUL, NOT_USEFUL = "useful", "not_useful"
FEEDBACK_VALUES = (USEFUL, NOT_USEFUL)
TITLE_CHARS = 100
FEEDBACK_NOTE = "feedback_note"  # the session extras' key of the note given with a feedback
NOTE_CHARS = 2000
# Sessions' case ids, as this process read or created them. A session's case id never changes once
# created (a row is only ever inserted, and retired / re-activated in place), so a known id needs no
# join to find it again.
KNOWN_CASE_IDS = 10_000

# Hot read paths: statements built once, executed with a bound session_id (SQLAlchemy then only
# looks the compiled form up instead of building and hashing a new construct on every call).
_SESSION_ID: BindParameter[str] = bindparam("session_id")
_FEEDBACK_STATE = (
    select(SESSION.c.feedback, CASE.c.case_id)
    .select_from(SESSION.outerjoin(CASE, CASE.c.diagnosis_id == SESSION.c.session_id))
    .where(SESSION.c.session_id == _SESSION_ID)
)
_SESSION_FEEDBACK = select(SESSION.c.feedback).where(SESSION.c.session_id == _SESSION_ID)


class FeedbackStore:
    _runner: Runner
    _case_ids: dict[str, str]  # session_id -> case_id, oldest first (KNOWN_CASE_IDS)

    async def submit_feedback(self, session_id: str, feedback: str) -> FeedbackOutcome:
        """docs/design.md §7. `useful` is idempotent through case_library's UNIQUE(diagnosis_id): the
        insert either wins or fails on the key, and the loser reads the winner's case — never a
        read-then-insert. The session row is updated first, so concurrent calls queue on its row
        lock rather than deadlocking on the case key. Feedback never changes `status`.

        A repeat (the session already has this feedback and, for `useful`, its case) is answered
        by one read-only SELECT with no write; only a change of feedback writes."""
        if feedback not in FEEDBACK_VALUES:
            raise ValueError(f"feedback must be one of {', '.join(FEEDBACK_VALUES)}, got {feedback!r}")
        repeated = await self._repeated_feedback(session_id, feedback)
        if repeated is not None:
            return repeated
        outcome = await self._write_feedback(session_id, feedback)
        if outcome.case_id is not None:
            self._know_case(session_id, outcome.case_id)
        return outcome

    async def record_feedback_note(self, session_id: str, feedback: str, note: str) -> None:
        """Keeps the note given with a feedback in the session's extras, as `feedback_note`
        {feedback, note}; a later note replaces it. The row is locked between the read and the
        write, so a concurrent write of the extras is not lost."""

        async def work(conn: AsyncConnection) -> None:
            row = (
                await conn.execute(
                    select(SESSION.c.extras).where(SESSION.c.session_id == session_id).with_for_update()
                )
            ).first()
            if row is None:
                raise SessionNotFound(session_id)
            extras = dict(row[0]) if isinstance(row[0], dict) else {}
            extras[FEEDBACK_NOTE] = {"feedback": feedback, "note": note[:NOTE_CHARS]}
            await conn.execute(
                update(SESSION)
                .where(SESSION.c.session_id == session_id)
                .values(extras=extras, updated_at=utcnow())
            )

        await self._runner.write(work)

    async def _write_feedback(self, session_id: str, feedback: str) -> FeedbackOutcome:
        if feedback == NOT_USEFUL:
            return await self._runner.write(lambda conn: _mark_not_useful(conn, session_id))

        async def work(conn: AsyncConnection) -> FeedbackOutcome:
            now = utcnow()
            marked = await conn.execute(
                update(SESSION)
                .where(
                    SESSION.c.session_id == session_id, SESSION.c.answer.is_not(None), SESSION.c.answer != ""
                )
                .values(feedback=USEFUL, updated_at=now)
            )
            session = (
                await conn.execute(
                    select(SESSION.c.query, SESSION.c.answer).where(SESSION.c.session_id == session_id)
                )
            ).first()
            if session is None:
                raise SessionNotFound(session_id)
            if marked.rowcount == 0:
                raise NoAnswer(session_id)
            query, answer = session
            case_id = str(uuid.uuid4())
            try:
                async with conn.begin_nested():
                    await conn.execute(
                        insert(CASE).values(
                            case_id=case_id,
                            diagnosis_id=session_id,
                            source_type="AUTO",
                            fault_category="GENERAL",
                            title=query[:TITLE_CHARS],
                            root_cause=answer,
                            solution=answer,
                            created_by="system",
                            created_at=now,
                        )
                    )
            except IntegrityError:
                existing = (
                    await conn.execute(
                        select(CASE.c.case_id)
                        .where(CASE.c.diagnosis_id == session_id)
                        .with_for_update(read=True)  # a locking read sees the winner's committed row
                    )
                ).scalar_one()
                # Useful again after not_useful: the retired case is retrieved again.
                await conn.execute(
                    update(CASE)
                    .where(CASE.c.diagnosis_id == session_id, CASE.c.retired_at.is_not(None))
                    .values(retired_at=None)
                )
                return FeedbackOutcome(case_id=existing, created=False)
            return FeedbackOutcome(case_id=case_id, created=True)

        return await self._runner.write(work)

    async def _repeated_feedback(self, session_id: str, feedback: str) -> FeedbackOutcome | None:
        """The read-only fast path of an idempotent repeat: one SELECT, no lock, no write.

        The outcome when the session already carries this feedback (and, for `useful`, its case
        exists); None when a write is needed. It only ever short-cuts a state that a write already
        committed, so creating the case still goes through the UNIQUE key in the write path. The
        feedback is read from the database every time (another replica may have changed it); only
        a case id this process has seen is taken from memory, which spares the join with
        case_library."""
        known_case = self._case_ids.get(session_id) if feedback == USEFUL else None
        if feedback == NOT_USEFUL or known_case is not None:
            row = await self._runner.read_first(_SESSION_FEEDBACK, {"session_id": session_id})
            if row is None:
                raise SessionNotFound(session_id)
            if row[0] != feedback:
                return None
            return FeedbackOutcome(case_id=known_case, created=False)
        row = await self._runner.read_first(_FEEDBACK_STATE, {"session_id": session_id})
        if row is None:
            raise SessionNotFound(session_id)
        current, case_id = row
        if case_id is not None:
            self._know_case(session_id, case_id)
        if current != feedback or case_id is None:
            return None
        return FeedbackOutcome(case_id=case_id, created=False)

    def _know_case(self, session_id: str, case_id: str) -> None:
        known = self._case_ids
        if session_id not in known:
            if len(known) >= KNOWN_CASE_IDS:
                del known[next(iter(known))]
            known[session_id] = case_id

    async def list_cases(self, limit: int = 1000) -> list[CaseRecord]:
        """The active cases, newest first (what lookup_knowledge searches): not the retired ones."""

        async def work(conn: AsyncConnection) -> list[CaseRecord]:
            rows = await conn.execute(
                select(CASE)
                .where(CASE.c.retired_at.is_(None))
                .order_by(CASE.c.created_at.desc(), CASE.c.id.desc())
                .limit(max(limit, 0))
            )
            return [case_record(row) for row in rows]

        return await self._runner.read(work)


async def _mark_not_useful(conn: AsyncConnection, session_id: str) -> FeedbackOutcome:
    """not_useful, and the session's case (if useful feedback made one) retired in the same
    transaction: it stops being retrieved and stays for audit. The session row is updated first,
    as in the useful path, so the two orders of concurrent feedback queue on one lock."""
    now = utcnow()
    await update_or_missing(conn, session_id, {"feedback": NOT_USEFUL, "updated_at": now})
    await conn.execute(
        update(CASE)
        .where(CASE.c.diagnosis_id == session_id, CASE.c.retired_at.is_(None))
        .values(retired_at=now)
    )
    return FeedbackOutcome(case_id=None, created=False)
