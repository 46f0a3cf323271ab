"""Feedback not_useful after useful retires the session's case (issue 19, item 14): it is no longer
retrieved, by lookup_knowledge either, and stays in case_library for audit; useful again brings
it back. Two Database objects on one database play two replicas; SQLite and MariaDB."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

from evigate.server.deadline import Deadline
from evigate.server.tools import SessionToolBox, build_backend
from evigate.storage import Database
from evigate.storage.rows import CASE

ANSWER = "当前查询检索到 checkout 服务的 OrderLockTimeoutException：订单锁等待超时。"


@pytest.fixture
async def replica(db: Database, database_url: str) -> AsyncIterator[Database]:
    other = await Database.open(database_url, pool_size=2, auto_migrate=False)
    try:
        yield other
    finally:
        await other.close()


async def _rows(db: Database) -> list[tuple[str, bool]]:
    async with db.engine.connect() as conn:
        rows = await conn.execute(select(CASE.c.case_id, CASE.c.retired_at))
        return [(case_id, retired_at is not None) for case_id, retired_at in rows]


async def _retrieved(db: Database, case_id: str) -> bool:
    """Whether lookup_knowledge, reading this database's case library, returns the case."""
    session_id = f"lookup-{uuid.uuid4().hex}"
    await db.repo.create_session(session_id, "q", "en", "test")
    toolbox = SessionToolBox(build_backend(None, db.repo), db.repo, session_id)
    call = await toolbox.call("lookup_knowledge", {"query": "OrderLockTimeoutException"}, Deadline.none())
    blocks = (call.raw_result or {}).get("evidence_blocks", [])
    return any(block["source"] == f"case:{case_id}" for block in blocks)


async def test_not_useful_after_useful_retires_the_case_and_useful_brings_it_back(
    db: Database, replica: Database
) -> None:
    await db.repo.create_session("s", "checkout 为什么报 OrderLockTimeoutException？", "zh", "test")
    await db.repo.finish_success("s", ANSWER, {}, {}, [], {})
    made = await db.repo.submit_feedback("s", "useful")
    assert made.case_id is not None and made.created
    assert [c.case_id for c in await replica.repo.list_cases()] == [made.case_id]
    assert await _retrieved(replica, made.case_id)

    assert (await replica.repo.submit_feedback("s", "not_useful")).case_id is None
    assert await db.repo.list_cases() == [] and await replica.repo.list_cases() == []
    assert not await _retrieved(db, made.case_id)
    assert await _rows(db) == [(made.case_id, True)]  # kept for audit
    assert (await replica.repo.submit_feedback("s", "not_useful")).case_id is None  # a repeat

    # db remembers the case id from its own useful call; it must still see the change of feedback.
    again = await db.repo.submit_feedback("s", "useful")
    assert (again.case_id, again.created) == (made.case_id, False)
    assert [c.case_id for c in await replica.repo.list_cases()] == [made.case_id]
    assert await _retrieved(replica, made.case_id)
    assert await _rows(replica) == [(made.case_id, False)]
    session = await replica.repo.get_session("s")
    assert session is not None and session.feedback == "useful"


async def test_not_useful_first_creates_no_case(db: Database, replica: Database) -> None:
    await db.repo.create_session("s", "q", "zh", "test")
    await db.repo.finish_success("s", ANSWER, {}, {}, [], {})
    await replica.repo.submit_feedback("s", "not_useful")
    assert await _rows(db) == []
    made = await db.repo.submit_feedback("s", "useful")
    assert made.created and await _rows(replica) == [(made.case_id, False)]
