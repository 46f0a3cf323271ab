"""The hot point reads on MySQL that bypass SQLAlchemy (storage.driver_reads), and the repeat-feedback
path built on them. The driver path exists on MariaDB only; the feedback behaviour is checked on
both backends."""

from __future__ import annotations

import asyncio
from typing import Any

import pymysql
import pytest
from sqlalchemy import text, update

from evigate.storage import Database, DatabaseUnavailable, migrate
from evigate.storage import feedback as storage_feedback
from evigate.storage.driver_reads import DriverReads
from evigate.storage.rows import SESSION
from tests.storage.storage_helpers import finished_session, kill_mysql_connection, sql_statements

# The driver path exists on MariaDB only: these tests take tests/conftest.py's `db` on that backend.
mariadb_only = pytest.mark.parametrize("db_backend", ["mariadb"])


def _reads(db: Database) -> DriverReads:
    reads = db._driver_reads
    assert reads is not None
    return reads


async def _driver_thread_id(db: Database) -> int:
    row = await db._runner.read_first(text("SELECT CONNECTION_ID()"), {})
    assert row is not None
    return int(row[0])


async def test_sqlite_has_no_driver_reads(tmp_path: Any) -> None:
    db = await Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    try:
        assert db._driver_reads is None
        row = await db._runner.read_first(text("SELECT 7"), {})
        assert row is not None and row[0] == 7
    finally:
        await db.close()


@mariadb_only
async def test_a_repeat_feedback_sends_no_statement_through_sqlalchemy(db: Database) -> None:
    await finished_session(db, "s")
    first = await db.repo.submit_feedback("s", "useful")
    with sql_statements(db) as statements:
        again = await db.repo.submit_feedback("s", "useful")
    assert again.case_id == first.case_id and not again.created
    assert statements == []  # answered by the driver path, not the pool
    assert db.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


@mariadb_only
async def test_the_driver_path_reuses_its_connection(db: Database) -> None:
    first = await _driver_thread_id(db)
    assert await _driver_thread_id(db) == first
    assert len(_reads(db)._idle) == 1


@mariadb_only
async def test_a_killed_connection_is_replaced_and_the_read_retried(db: Database) -> None:
    await finished_session(db, "s")
    killed = await _driver_thread_id(db)
    kill_mysql_connection(killed)
    outcome = await db.repo.submit_feedback("s", "not_useful")  # reads through the dead one first
    assert outcome.case_id is None
    assert await _driver_thread_id(db) != killed


@mariadb_only
async def test_a_cancelled_read_closes_its_connection(db: Database) -> None:
    reads = _reads(db)
    await _driver_thread_id(db)  # one idle connection, which the slow read takes
    task = asyncio.create_task(db._runner.read_first(text("SELECT SLEEP(30)"), {}))
    for _ in range(1000):  # until the read has taken the idle connection
        if not reads._idle:
            break
        await asyncio.sleep(0)
    assert reads._idle == []
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert reads._idle == []  # never returned: a half-read result must not reach the next read
    row = await db._runner.read_first(text("SELECT 7"), {})  # a fresh connection
    assert row is not None and row[0] == 7


@mariadb_only
async def test_an_unreachable_database_is_database_unavailable(db: Database) -> None:
    async def refuse() -> Any:
        raise pymysql.err.OperationalError(2003, "Can't connect to MySQL server")

    reads = _reads(db)
    await reads.close()
    broken = DriverReads(refuse, db.engine.dialect, size=2, timeout=1.0, recycle=60.0)
    runner = type(db._runner)(db.engine, db.engine, broken)
    with pytest.raises(DatabaseUnavailable):
        await runner.read_first(text("SELECT 1"), {})


@mariadb_only
async def test_closed_reads_open_nothing_and_old_connections_are_recycled(db: Database) -> None:
    reads = _reads(db)
    reads._recycle = 0.0  # every connection is past its age when it comes back
    await _driver_thread_id(db)
    assert reads._idle == []
    reads._recycle = 3600.0
    await _driver_thread_id(db)
    idle = [conn for conn, _opened in reads._idle]
    await reads.close()
    assert all(conn.closed for conn in idle)
    with pytest.raises(DatabaseUnavailable):
        await reads.first(text("SELECT 1"), {})


async def test_a_known_case_still_reads_the_feedback_another_writer_changed(database_url: str) -> None:
    """The case id may come from memory; the session's feedback never does."""
    if not database_url.startswith("sqlite"):
        await migrate(database_url)
    here = await Database.open(database_url, pool_size=2)
    other = await Database.open(database_url, pool_size=2)  # another replica
    try:
        await finished_session(here, "s")
        useful = await here.repo.submit_feedback("s", "useful")
        assert (await other.repo.submit_feedback("s", "not_useful")).case_id is None
        again = await here.repo.submit_feedback("s", "useful")
        assert again.case_id == useful.case_id and not again.created
        session = await other.repo.get_session("s")
        assert session is not None and session.feedback == "useful"
        assert len(await other.repo.list_cases()) == 1
    finally:
        await here.close()
        await other.close()


async def test_known_case_ids_are_bounded(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage_feedback, "KNOWN_CASE_IDS", 2)
    cases = {}
    for name in ("a", "b", "c"):
        await finished_session(db, name)
        cases[name] = (await db.repo.submit_feedback(name, "useful")).case_id
    known = db.repo._case_ids
    assert list(known) == ["b", "c"]  # the oldest forgotten
    again = await db.repo.submit_feedback("a", "useful")  # read from the database again
    assert again.case_id == cases["a"]


async def test_feedback_of_a_session_without_a_case_still_creates_it(db: Database) -> None:
    """A row marked useful before cases existed (or by another writer) gets its case on repeat."""
    await finished_session(db, "s")
    async with db.engine.begin() as conn:
        await conn.execute(update(SESSION).where(SESSION.c.session_id == "s").values(feedback="useful"))
    outcome = await db.repo.submit_feedback("s", "useful")
    assert outcome.created and outcome.case_id is not None
