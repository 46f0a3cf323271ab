"""Connections: unreachable database, retries, cancellation without leaked connections."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import pymysql
import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

from evigate.storage import Database, DatabaseUnavailable, SchemaOutOfDate, migrate
from evigate.storage.failures import Failure, classify
from evigate.storage.runner import Runner
from tests.storage.storage_helpers import kill_mysql_connection


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _closed_url() -> str:
    return f"mysql+aiomysql://root:@127.0.0.1:{_closed_port()}/evigate?charset=utf8mb4"


def _lost_connection() -> OperationalError:
    return OperationalError("SELECT 1", {}, pymysql.err.OperationalError(2013, "Lost connection"))


async def test_open_on_closed_port_raises_database_unavailable() -> None:
    with pytest.raises(DatabaseUnavailable):
        await Database.open(_closed_url())
    with pytest.raises(DatabaseUnavailable):
        await Database.open(_closed_url(), auto_migrate=True)


async def test_every_repository_call_maps_unreachable_to_database_unavailable() -> None:
    db = Database(create_async_engine(_closed_url()))
    try:
        assert await db.ping() is False
        calls: list[Any] = [
            db.repo.get_session("s"),
            db.repo.create_session("s", "q", "zh", "o"),
            db.repo.record_invocation("s", "query_logs", {}, "success", None, None, {}, 1.0),
            db.repo.submit_feedback("s", "useful"),
            db.repo.get_trace("s"),
            db.repo.list_sessions(None, None, 10, None),
            db.repo.claim_jobs("w", "evidence_score", 1, 10),
            db.repo.job_stats(),
        ]
        for call in calls:
            with pytest.raises(DatabaseUnavailable):
                await call
    finally:
        await db.close()


async def test_mysql_schema_behind_raises_until_migrated(mysql_database_factory: Any) -> None:
    url = mysql_database_factory()
    with pytest.raises(SchemaOutOfDate, match="evigate migrate"):
        await Database.open(url)


async def test_ping_is_true_on_a_live_database(db: Database) -> None:
    assert await db.ping() is True


async def test_reads_retry_transient_errors_writes_do_not(db: Database) -> None:
    runner = Runner(db.engine, db.engine)
    failures = iter([_lost_connection(), _lost_connection()])

    async def flaky(conn: AsyncConnection) -> int:
        error = next(failures, None)
        if error is not None:
            raise error
        return int((await conn.execute(text("SELECT 7"))).scalar_one())

    assert await runner.read(flaky) == 7

    async def always_lost(conn: AsyncConnection) -> None:
        raise _lost_connection()

    with pytest.raises(DatabaseUnavailable):
        await runner.read(always_lost)
    assert runner.breaker.open  # unreachable after every retry: later calls fail fast
    runner.breaker.close()  # as the health ping does once the database answers
    attempts = 0

    async def write_lost(conn: AsyncConnection) -> None:
        nonlocal attempts
        attempts += 1
        raise _lost_connection()

    with pytest.raises(DatabaseUnavailable):
        await runner.write(write_lost)
    assert attempts == 1  # a write may have committed before the connection dropped: no retry


async def test_read_first_retries_a_lost_connection(db: Database) -> None:
    runner = Runner(db.engine, db.engine)
    failures = iter([_lost_connection()])

    def fail_once(*_args: Any) -> None:
        error = next(failures, None)
        if error is not None:
            raise error

    event.listen(db.engine.sync_engine, "before_cursor_execute", fail_once)
    try:
        row = await runner.read_first(text("SELECT 7"), {})
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", fail_once)
    assert row is not None and row[0] == 7
    assert next(failures, None) is None  # the first attempt did fail
    assert db.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


def _slow_query(dialect: str) -> str:
    """A statement that runs for long and says when it has started: on SQLite it calls
    `statement_running()` (see _announce_running), on MariaDB it shows in the process list."""
    if dialect == "sqlite":
        return (
            "WITH RECURSIVE n(i) AS (SELECT statement_running() UNION ALL SELECT i + 1 FROM n "
            "WHERE i < 300000000) SELECT count(*) FROM n"
        )
    return "SELECT SLEEP(30) AS evigate_cancel_probe"


def _set_and_answer(flag: threading.Event) -> Callable[[], int]:
    def answer() -> int:
        flag.set()
        return 1

    return answer


async def _announce_running(db: Database) -> threading.Event:
    """Set once the slow statement runs on the server: SQLite connections (opened afresh) get a
    statement_running() function that sets it; MariaDB's process list is watched for the statement."""
    running = threading.Event()
    if db.engine.dialect.name == "sqlite":

        def register(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.create_function("statement_running", 0, _set_and_answer(running))

        await db.engine.dispose()  # the pooled connections lack the function
        event.listen(db.engine.sync_engine, "connect", register)
        return running

    def watch() -> None:
        admin = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
        try:
            with admin.cursor() as cursor:
                while not running.is_set():
                    cursor.execute(
                        "SELECT COUNT(*) FROM information_schema.processlist "
                        "WHERE info LIKE 'SELECT SLEEP(30) AS evigate_cancel_probe%'"
                    )
                    row = cursor.fetchone()
                    if row is not None and row[0]:
                        running.set()
        finally:
            admin.close()

    threading.Thread(target=watch, daemon=True).start()
    return running


@pytest.mark.parametrize("path", ["read", "read_first"])
async def test_cancelled_query_returns_its_connection(db: Database, path: str) -> None:
    running = await _announce_running(db)
    runner = Runner(db.engine, db.engine)
    slow = _slow_query(db.engine.dialect.name)

    async def work(conn: AsyncConnection) -> None:
        await conn.execute(text(slow))

    call = runner.read(work) if path == "read" else runner.read_first(text(slow), {})
    task = asyncio.create_task(call)
    try:
        assert await asyncio.to_thread(running.wait, 30)  # the statement runs on the server
    finally:
        running.set()  # the process-list watcher ends either way
    assert db.engine.pool.checkedout() == 1  # type: ignore[attr-defined]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert db.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    # The pool still works afterwards.
    await db.repo.create_session("after-cancel", "q", "zh", "o")
    assert await db.repo.get_session("after-cancel") is not None
    assert db.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


def _dbapi(orig: Exception) -> OperationalError:
    return OperationalError("SELECT 1", {}, orig)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (_dbapi(pymysql.err.OperationalError(2003, "Can't connect")), Failure.UNAVAILABLE),
        (_dbapi(pymysql.err.OperationalError(2006, "gone away")), Failure.UNAVAILABLE),
        (_dbapi(pymysql.err.OperationalError(1213, "Deadlock found")), Failure.CONFLICT),
        (_dbapi(pymysql.err.OperationalError(1205, "Lock wait timeout")), Failure.CONFLICT),
        (_dbapi(pymysql.err.OperationalError(1054, "Unknown column")), Failure.OTHER),
        (_dbapi(sqlite3.OperationalError("database is locked")), Failure.CONFLICT),
        (_dbapi(sqlite3.OperationalError("unable to open database file")), Failure.UNAVAILABLE),
        (IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE constraint failed")), Failure.OTHER),
        (ConnectionRefusedError(111, "refused"), Failure.UNAVAILABLE),
        (PoolTimeout("QueuePool limit reached"), Failure.UNAVAILABLE),
        (ValueError("x"), Failure.OTHER),
    ],
)
def test_error_classification(error: BaseException, expected: Failure) -> None:
    assert classify(error) is expected


async def _pinged_reads(url: str, bypass_seconds: float, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many pre-pings five reads in a row cost with the given alive-bypass window."""
    from sqlalchemy.dialects.mysql.aiomysql import MySQLDialect_aiomysql

    from evigate.storage import db as storage_db

    pings: list[int] = []
    original = MySQLDialect_aiomysql.do_ping

    def counting(self: Any, dbapi_connection: Any) -> bool:
        pings.append(1)
        return bool(original(self, dbapi_connection))

    monkeypatch.setattr(MySQLDialect_aiomysql, "do_ping", counting)
    monkeypatch.setattr(storage_db, "PING_BYPASS_SECONDS", bypass_seconds)
    db = await Database.open(url, pool_size=1)
    try:
        for _ in range(5):
            assert await db.repo.get_session("missing") is None
    finally:
        await db.close()
    return len(pings)


async def test_mysql_pre_ping_skips_connections_returned_moments_ago(
    mysql_database_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = mysql_database_factory()
    await migrate(url)
    assert await _pinged_reads(url, 3600.0, monkeypatch) == 0
    assert await _pinged_reads(url, 0.0, monkeypatch) >= 4  # every checkout of a pooled connection


async def test_mysql_connection_killed_inside_the_bypass_window_is_replaced(
    mysql_database_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evigate.storage import db as storage_db

    url = mysql_database_factory()
    await migrate(url)
    monkeypatch.setattr(storage_db, "PING_BYPASS_SECONDS", 3600.0)
    db = await Database.open(url, pool_size=1)
    try:
        await db.repo.create_session("s", "q", "zh", "o")
        async with db.engine.connect() as conn:
            thread_id = (await conn.execute(text("SELECT CONNECTION_ID()"))).scalar_one()
        kill_mysql_connection(thread_id)
        session = await db.repo.get_session("s")  # the dead connection fails, the read is retried
        assert session is not None and session.query == "q"
    finally:
        await db.close()
