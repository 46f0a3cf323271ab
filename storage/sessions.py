"""The diagnosis_session rows: create, the pipeline's progress and outcome, the evidence score,
orphans at start-up, and the keyset-paginated list. A mixin of storage.repository.Repository;
each public method is one transaction (storage.runner)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from evigate.rules.enums import SessionStatus
from evigate.storage.errors import SessionAlreadyExists, SessionNotFound
from evigate.storage.jobs import EVIDENCE_SCORE, job_insert
from evigate.storage.opinions import LLM_OPINION, llm_factors
from evigate.storage.records import JsonDict, SessionRecord
from evigate.storage.rows import (
    SESSION,
    SESSION_COLUMNS,
    decode_page_token,
    encode_page_token,
    session_record,
)
from evigate.storage.runner import Runner
from evigate.storage.self_evaluation import locked_self_evaluation, store_self_evaluation
from evigate.storage.types import utcnow

RUNNING, SUCCESS, FAILED = SessionStatus.RUNNING, SessionStatus.SUCCESS, SessionStatus.FAILED
MAX_PAGE_SIZE = 1000
DEFAULT_PAGE_SIZE = 50
SESSION_ID_CHARS = 64  # diagnosis_session.session_id VARCHAR(64)
TEXT_CHARS = 8000  # error texts go to TEXT columns (64 KiB, up to 4 bytes a character)


class SessionStore:
    _runner: Runner
    opinion_jobs = False  # set by the composition root when an evaluation LLM is configured

    async def create_session(
        self,
        session_id: str,
        query: str,
        language: str,
        owner: str,
        *,
        status: str = RUNNING,
        extras: JsonDict | None = None,
    ) -> SessionRecord:
        """A new session: RUNNING for the pipeline; an agent session is created AGENT, with its
        extras, in the same INSERT (it never runs, so it is never an orphan to fail at start-up)."""
        if not session_id or len(session_id) > SESSION_ID_CHARS:
            raise ValueError(f"session_id must be 1..{SESSION_ID_CHARS} characters")
        now = utcnow()
        values: dict[str, Any] = {
            "session_id": session_id,
            "query": query,
            "language": language,
            "owner": owner,
            "status": status,
            "extras": extras,
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
            status=status,
            answer=None,
            feedback=None,
            failure_reason=None,
            created_at=now,
            updated_at=now,
            self_evaluation=None,
            planner_plan=None,
            meta=None,
            composer_output=None,
            extras=extras,
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
            await update_or_missing(conn, session_id, values)

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
            await update_or_missing(conn, session_id, values)
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
            current = await locked_self_evaluation(conn, session_id)
            merged = dict(current)
            merged.update({k: v for k, v in score.items() if not k.startswith("verifier_evaluation")})
            if isinstance(current.get(LLM_OPINION), dict):  # an opinion written first is kept
                merged[LLM_OPINION] = current[LLM_OPINION]
                merged["factors"] = [*score.get("factors", []), *llm_factors(current)]
            await store_self_evaluation(conn, session_id, merged)

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


async def update_or_missing(conn: AsyncConnection, session_id: str, values: dict[str, Any]) -> None:
    result = await conn.execute(update(SESSION).where(SESSION.c.session_id == session_id).values(**values))
    if result.rowcount == 0:
        raise SessionNotFound(session_id)
