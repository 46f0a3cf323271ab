"""Tool invocations, Verifier rounds and the whole trace of a session. A mixin of
storage.repository.Repository; each public method is one transaction (storage.runner)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select
from sqlalchemy.dialects import mysql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import BindParameter

from evigate.storage.errors import SessionNotFound
from evigate.storage.jobs import inserted_id
from evigate.storage.records import InvocationRecord, JsonDict, RoundRecord, TraceRecord
from evigate.storage.rows import (
    CASE,
    INVOCATION,
    ROUND,
    ROUND_COLUMNS,
    SESSION,
    SESSION_COLUMNS,
    invocation_record,
    round_record,
    session_record,
)
from evigate.storage.runner import Runner
from evigate.storage.sessions import TEXT_CHARS
from evigate.storage.types import utcnow

# The trace is a hot read path: statements built once, executed with a bound session_id (SQLAlchemy
# then only looks the compiled form up instead of building and hashing a new construct per call).
_SESSION_ID: BindParameter[str] = bindparam("session_id")
_TRACE_SESSION = (
    select(*SESSION_COLUMNS, CASE.c.case_id)
    .select_from(SESSION.outerjoin(CASE, CASE.c.diagnosis_id == SESSION.c.session_id))
    .where(SESSION.c.session_id == _SESSION_ID)
)
_TRACE_ROUNDS = select(*ROUND_COLUMNS).where(ROUND.c.session_id == _SESSION_ID).order_by(ROUND.c.round)
_TRACE_INVOCATIONS = (
    select(INVOCATION).where(INVOCATION.c.session_id == _SESSION_ID).order_by(INVOCATION.c.id)
)


class InvocationStore:
    _runner: Runner

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
            return await invocations_of(conn, session_id)

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


async def invocations_of(conn: AsyncConnection, session_id: str) -> list[InvocationRecord]:
    rows = await conn.execute(
        select(INVOCATION).where(INVOCATION.c.session_id == session_id).order_by(INVOCATION.c.id)
    )
    return [invocation_record(row) for row in rows]
