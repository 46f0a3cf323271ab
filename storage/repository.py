"""Repositories that speak the domain. Each public method is one transaction (storage.runner)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, insert, or_, select, update
from sqlalchemy.dialects import mysql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import BindParameter

from evigate.storage.cases import CaseStore
from evigate.storage.errors import NoAnswer, SessionAlreadyExists, SessionNotFound
from evigate.storage.jobs import EVIDENCE_SCORE, JobQueue, inserted_id, job_insert
from evigate.storage.opinions import LLM_OPINION, OpinionStore, llm_factors
from evigate.storage.records import (
    CaseRecord,
    FeedbackOutcome,
    InvocationRecord,
    JsonDict,
    RoundRecord,
    SessionRecord,
    TraceRecord,
)
from evigate.storage.rows import (
    CASE,
    INVOCATION,
    ROUND,
    ROUND_COLUMNS,
    SESSION,
    SESSION_COLUMNS,
    case_record,
    decode_page_token,
    encode_page_token,
    invocation_record,
    round_record,
    session_record,
)
from evigate.storage.runner import Runner
from evigate.storage.types import utcnow

RUNNING, SUCCESS, FAILED = "RUNNING", "SUCCESS", "FAILED"
USEFUL, NOT_USEFUL = "useful", "not_useful"
FEEDBACK_VALUES = (USEFUL, NOT_USEFUL)
TITLE_CHARS = 100
MAX_PAGE_SIZE = 1000
DEFAULT_PAGE_SIZE = 50
SESSION_ID_CHARS = 64  # diagnosis_session.session_id VARCHAR(64)
TEXT_CHARS = 8000  # error texts go to TEXT columns (64 KiB, up to 4 bytes a character)


# Hot read paths: statements built once, executed with a bound session_id (SQLAlchemy then only
# looks the compiled form up instead of building and hashing a new construct on every call).
_SESSION_ID: BindParameter[str] = bindparam("session_id")
_SESSION_WITH_CASE = SESSION.outerjoin(CASE, CASE.c.diagnosis_id == SESSION.c.session_id)
_FEEDBACK_STATE = (
    select(SESSION.c.feedback, CASE.c.case_id)
    .select_from(_SESSION_WITH_CASE)
    .where(SESSION.c.session_id == _SESSION_ID)
)
_SESSION_FEEDBACK = select(SESSION.c.feedback).where(SESSION.c.session_id == _SESSION_ID)
# Sessions' case ids, as this process read or created them. A session's case id never changes once
# created (a row is only ever inserted, and retired / re-activated in place), so a known id needs no
# join to find it again.
KNOWN_CASE_IDS = 10_000

_TRACE_SESSION = (
    select(*SESSION_COLUMNS, CASE.c.case_id)
    .select_from(_SESSION_WITH_CASE)
    .where(SESSION.c.session_id == _SESSION_ID)
)
_TRACE_ROUNDS = select(*ROUND_COLUMNS).where(ROUND.c.session_id == _SESSION_ID).order_by(ROUND.c.round)
_TRACE_INVOCATIONS = (
    select(INVOCATION).where(INVOCATION.c.session_id == _SESSION_ID).order_by(INVOCATION.c.id)
)


class Repository(JobQueue, CaseStore, OpinionStore):
    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._case_ids: dict[str, str] = {}  # session_id -> case_id, oldest first (KNOWN_CASE_IDS)
        self.opinion_jobs = False  # set by the composition root when an evaluation LLM is configured

    # -- sessions -------------------------------------------------------------------------------

    async def create_session(self, session_id: str, query: str, language: str, owner: str) -> SessionRecord:
        if not session_id or len(session_id) > SESSION_ID_CHARS:
            raise ValueError(f"session_id must be 1..{SESSION_ID_CHARS} characters")
        now = utcnow()
        values: dict[str, Any] = {
            "session_id": session_id,
            "query": query,
            "language": language,
            "owner": owner,
            "status": RUNNING,
            "created_at": now,
            "updated_at": now,
        }

        async def work(conn: AsyncConnection) -> None:
            try:
                await conn.execute(insert(SESSION).values(**values))
            except IntegrityError as exc:
                raise SessionAlreadyExists(session_id) from exc

        await self._runner.write(work)
        return SessionRecord(
            session_id=session_id,
            query=query,
            language=language,
            status=RUNNING,
            answer=None,
            feedback=None,
            failure_reason=None,
            created_at=now,
            updated_at=now,
            self_evaluation=None,
            planner_plan=None,
            meta=None,
            composer_output=None,
            extras=None,
            owner=owner,
        )

    async def get_session(self, session_id: str) -> SessionRecord | None:
        async def work(conn: AsyncConnection) -> SessionRecord | None:
            row = (
                await conn.execute(select(*SESSION_COLUMNS).where(SESSION.c.session_id == session_id))
            ).first()
            return None if row is None else session_record(row)

        return await self._runner.read(work)

    async def _update_session(self, session_id: str, values: dict[str, Any]) -> None:
        values["updated_at"] = utcnow()

        async def work(conn: AsyncConnection) -> None:
            await _update_or_missing(conn, session_id, values)

        await self._runner.write(work)

    async def save_plan(self, session_id: str, plan: JsonDict, meta: JsonDict) -> None:
        await self._update_session(session_id, {"planner_plan": plan, "meta": meta})

    async def finish_success(  # noqa: PLR0917 - the pipeline and tools call it positionally
        self,
        session_id: str,
        answer: str,
        composer_output: JsonDict,
        verifier_evaluation: JsonDict,
        verifier_rounds: list[JsonDict],
        extras: JsonDict,
    ) -> None:
        """SUCCESS, and the evidence_score job in the same transaction: a crash after the commit
        can delay the score but never lose it."""
        now = utcnow()
        values = {
            "status": SUCCESS,
            "answer": answer,
            "composer_output": composer_output,
            "self_evaluation": {
                "verifier_evaluation": verifier_evaluation,
                "verifier_evaluation_rounds": verifier_rounds,
            },
            "extras": extras,
            "updated_at": now,
        }

        async def work(conn: AsyncConnection) -> None:
            await _update_or_missing(conn, session_id, values)
            await conn.execute(job_insert(EVIDENCE_SCORE, session_id, {}, now))
            if self.opinion_jobs:
                await conn.execute(job_insert(LLM_OPINION, session_id, {}, now))

        await self._runner.write(work)

    async def finish_failed(
        self, session_id: str, reason: str, extras: JsonDict, *, undelivered: bool = False
    ) -> bool:
        """FAILED with the reason — only while RUNNING, unless `undelivered`: then a SUCCESS is
        failed too (its reply never reached the caller: the commit raced the deadline or a
        cancellation), keeping its extras. True when the row changed."""
        now = utcnow()
        values = {"status": FAILED, "failure_reason": reason[:TEXT_CHARS], "updated_at": now}

        async def work(conn: AsyncConnection) -> bool:
            result = await conn.execute(
                update(SESSION)
                .where(SESSION.c.session_id == session_id, SESSION.c.status == RUNNING)
                .values(**values, extras=extras)
            )
            if result.rowcount == 0 and undelivered:
                result = await conn.execute(
                    update(SESSION)
                    .where(SESSION.c.session_id == session_id, SESSION.c.status == SUCCESS)
                    .values(**values)
                )
            if result.rowcount == 0:
                found = await conn.execute(select(SESSION.c.id).where(SESSION.c.session_id == session_id))
                if found.first() is None:
                    raise SessionNotFound(session_id)
                return False
            return True

        return await self._runner.write(work)

    async def write_evidence_score(self, session_id: str, score: JsonDict) -> None:
        """Merge the score into self_evaluation; verifier_evaluation* keys always survive."""

        async def work(conn: AsyncConnection) -> None:
            row = (
                await conn.execute(
                    select(SESSION.c.self_evaluation)
                    .where(SESSION.c.session_id == session_id)
                    .with_for_update()
                )
            ).first()
            if row is None:
                raise SessionNotFound(session_id)
            current = row[0] if isinstance(row[0], dict) else {}
            merged = dict(current)
            merged.update({k: v for k, v in score.items() if not k.startswith("verifier_evaluation")})
            if isinstance(current.get(LLM_OPINION), dict):  # an opinion written first is kept
                merged[LLM_OPINION] = current[LLM_OPINION]
                merged["factors"] = [*score.get("factors", []), *llm_factors(current)]
            await conn.execute(
                update(SESSION)
                .where(SESSION.c.session_id == session_id)
                .values(self_evaluation=merged, updated_at=utcnow())
            )

        await self._runner.write(work)

    async def fail_orphaned_sessions(self, owner: str, reason: str) -> int:
        """At start-up: sessions this owner left RUNNING when it died can never finish."""

        async def work(conn: AsyncConnection) -> int:
            result = await conn.execute(
                update(SESSION)
                .where(SESSION.c.owner == owner, SESSION.c.status == RUNNING)
                .values(status=FAILED, failure_reason=reason[:TEXT_CHARS], updated_at=utcnow())
            )
            return int(result.rowcount)

        return await self._runner.write(work)

    async def list_sessions(
        self, feedback: str | None, status: str | None, page_size: int, page_token: str | None
    ) -> tuple[list[SessionRecord], str | None]:
        """Newest first. Keyset pagination on (created_at, id): stable under concurrent inserts."""
        size = DEFAULT_PAGE_SIZE if page_size <= 0 else min(page_size, MAX_PAGE_SIZE)
        filters = [feedback, status]
        conditions = []
        if feedback is not None:
            conditions.append(SESSION.c.feedback == feedback)
        if status is not None:
            conditions.append(SESSION.c.status == status)
        if page_token:
            created_at, row_id = decode_page_token(page_token, filters)
            conditions.append(
                or_(
                    SESSION.c.created_at < created_at,
                    and_(SESSION.c.created_at == created_at, SESSION.c.id < row_id),
                )
            )
        statement = (
            select(SESSION.c.id, *SESSION_COLUMNS)
            .where(*conditions)
            .order_by(SESSION.c.created_at.desc(), SESSION.c.id.desc())
            .limit(size + 1)
        )

        async def work(conn: AsyncConnection) -> tuple[list[SessionRecord], str | None]:
            rows = list(await conn.execute(statement))
            token = None
            if len(rows) > size:
                rows = rows[:size]
                last = rows[-1]._mapping
                token = encode_page_token(last["created_at"], last["id"], filters)
            return [session_record(row) for row in rows], token

        return await self._runner.read(work)

    # -- invocations and rounds -----------------------------------------------------------------

    async def record_invocation(  # noqa: PLR0917 - the pipeline and tools call it positionally
        self,
        session_id: str,
        tool_name: str,
        arguments: JsonDict,
        status: str,
        error: str | None,
        raw_result: JsonDict | None,
        retrieval_details: JsonDict,
        latency_ms: float,
        *,
        created_at: datetime | None = None,
    ) -> int:
        """Returns tool_invocation.id: the source_invocation_id that claims cite. `created_at` lets
        the caller report the same time as the row (StreamChat's event); default now."""
        values = {
            "session_id": session_id,
            "tool_name": tool_name,
            "arguments": arguments,
            "status": status,
            "error": None if error is None else error[:TEXT_CHARS],
            "raw_result": raw_result,
            "retrieval_details": retrieval_details,
            "latency_ms": latency_ms,
            "created_at": created_at or utcnow(),
        }

        async def work(conn: AsyncConnection) -> int:
            try:
                result = await conn.execute(insert(INVOCATION).values(**values))
            except IntegrityError as exc:  # the foreign key: no such session
                raise SessionNotFound(session_id) from exc
            return inserted_id(result)

        return await self._runner.write(work)

    async def list_invocations(self, session_id: str) -> list[InvocationRecord]:
        async def work(conn: AsyncConnection) -> list[InvocationRecord]:
            return await _invocations(conn, session_id)

        return await self._runner.read(work)

    async def save_round(self, session_id: str, round: RoundRecord) -> None:
        now = utcnow()
        fields: dict[str, Any] = {c.name: getattr(round, c.name) for c in ROUND_COLUMNS}
        values = {"session_id": session_id, **fields, "created_at": now, "updated_at": now}
        changes = {**fields, "updated_at": now}
        changes.pop("round")

        async def work(conn: AsyncConnection) -> None:
            statement: Any
            if self._runner.is_mysql:
                statement = mysql.insert(ROUND).values(**values).on_duplicate_key_update(**changes)
            else:
                statement = (
                    sqlite.insert(ROUND)
                    .values(**values)
                    .on_conflict_do_update(index_elements=["session_id", "round"], set_=changes)
                )
            try:
                await conn.execute(statement)
            except IntegrityError as exc:
                raise SessionNotFound(session_id) from exc

        await self._runner.write(work)

    async def get_trace(self, session_id: str) -> TraceRecord | None:
        """Three SELECTs whatever the trace size: session (joined with its case), rounds, invocations."""

        bound = {"session_id": session_id}

        async def work(conn: AsyncConnection) -> TraceRecord | None:
            row = (await conn.execute(_TRACE_SESSION, bound)).first()
            if row is None:
                return None
            rounds = await conn.execute(_TRACE_ROUNDS, bound)
            invocations = await conn.execute(_TRACE_INVOCATIONS, bound)
            return TraceRecord(
                session=session_record(row),
                rounds=[round_record(r) for r in rounds],
                invocations=[invocation_record(r) for r in invocations],
                case_id=row._mapping["case_id"],
            )

        return await self._runner.read(work)

    # -- feedback and cases ---------------------------------------------------------------------

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
    await _update_or_missing(conn, session_id, {"feedback": NOT_USEFUL, "updated_at": now})
    await conn.execute(
        update(CASE)
        .where(CASE.c.diagnosis_id == session_id, CASE.c.retired_at.is_(None))
        .values(retired_at=now)
    )
    return FeedbackOutcome(case_id=None, created=False)


async def _update_or_missing(conn: AsyncConnection, session_id: str, values: dict[str, Any]) -> None:
    result = await conn.execute(update(SESSION).where(SESSION.c.session_id == session_id).values(**values))
    if result.rowcount == 0:
        raise SessionNotFound(session_id)


async def _invocations(conn: AsyncConnection, session_id: str) -> list[InvocationRecord]:
    rows = await conn.execute(
        select(INVOCATION).where(INVOCATION.c.session_id == session_id).order_by(INVOCATION.c.id)
    )
    return [invocation_record(row) for row in rows]
