"""Every unit of work is bounded by the database timeout (issue 19, item 7), on SQLite and MariaDB:
a statement that outlasts it fails with DatabaseUnavailable, later calls fail at once while the
database is known not to answer, and the first ping that gets an answer lets them through again.
A SQLite write lock held past the busy timeout is DatabaseUnavailable ("busy"), not a crash."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection

from evigate.storage import Database, migrate
from evigate.storage.errors import DatabaseUnavailable

TIMEOUT_S = 0.5
SLOW = {
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "mariadb": "SELECT BENCHMARK(100000000000, MD5('evigate'))",
}


@pytest.fixture
async def short(database_url: str, db_backend: str) -> AsyncIterator[Database]:
    if db_backend == "mariadb":
        await migrate(database_url)
    database = await Database.open(database_url, pool_size=2, timeout_s=TIMEOUT_S)
    try:
        yield database
    finally:
        await database.close()


async def test_a_slow_statement_is_cut_then_calls_fail_fast_until_a_ping_answers(
    short: Database, db_backend: str
) -> None:
    async def slow(conn: AsyncConnection) -> object:
        return (await conn.execute(text(SLOW[db_backend]))).scalar()

    runner = short.repo._runner  # the unit-of-work seam itself, with a statement no repository runs
    with pytest.raises(DatabaseUnavailable, match="no answer within") as info:  # it would run for ever
        await runner.read(slow)
    assert info.value.retry_after_s > 0
    assert runner.breaker.open

    # No new wait: known not to answer, the call is refused before it reaches the database.
    with pytest.raises(DatabaseUnavailable, match="retry in"):
        await short.repo.get_session("any")

    assert await short.ping()
    assert await short.repo.get_session("any") is None


async def test_a_sqlite_write_lock_held_too_long_is_busy_not_a_crash(tmp_path: object) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/locked.db"
    database = await Database.open(url, timeout_s=1.0)  # the lock is waited for 0.5 s
    holder = sqlite3.connect(str(make_url(url).database), isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # the write lock, never released during the call
        with pytest.raises(DatabaseUnavailable, match="busy"):
            await database.repo.create_session("s", "q", "en", "test")
        holder.execute("ROLLBACK")
        await database.repo.create_session("s", "q", "en", "test")
        assert await database.repo.get_session("s") is not None
    finally:
        holder.close()
        await database.close()
