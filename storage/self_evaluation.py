"""Read-modify-write of a session's `self_evaluation` JSON inside one transaction: the evidence
score job and the LLM-opinion job both merge into it, so each locks the row before reading."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from evigate.storage.errors import SessionNotFound
from evigate.storage.records import JsonDict
from evigate.storage.rows import SESSION
from evigate.storage.types import utcnow


async def locked_self_evaluation(conn: AsyncConnection, session_id: str) -> JsonDict:
    """The session's self_evaluation ({} when empty), its row locked until the transaction ends."""
    row = (
        await conn.execute(
            select(SESSION.c.self_evaluation).where(SESSION.c.session_id == session_id).with_for_update()
        )
    ).first()
    if row is None:
        raise SessionNotFound(session_id)
    return dict(row[0]) if isinstance(row[0], dict) else {}


async def store_self_evaluation(conn: AsyncConnection, session_id: str, value: JsonDict) -> None:
    await conn.execute(
        update(SESSION)
        .where(SESSION.c.session_id == session_id)
        .values(self_evaluation=value, updated_at=utcnow())
    )
