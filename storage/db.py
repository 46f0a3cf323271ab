"""Engine, pool and schema check: the one object the server opens at start-up."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
import weakref
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from evigate.storage.case_vectors import CaseVectors
from evigate.storage.driver_reads import DriverReads
from evigate.storage.errors import SchemaOutOfDate
from evigate.storage.migration import current_revision_sync, head_revision, migrate
from evigate.storage.repository import Repository
from evigate.storage.runner import DEFAULT_TIMEOUT_SECONDS, Runner
from evigate.storage.urls import default_sqlite_url, is_sqlite, is_sqlite_memory, normalize_url

__all__ = ["Database", "default_sqlite_url", "migrate"]

log = logging.getLogger("evigate.storage")


# Store real UTF-8 (Chinese, emoji) rather than \u escapes, so other readers see the text.
_json_dumps = functools.partial(json.dumps, ensure_ascii=False, separators=(",", ":"))


MYSQL_POOL_TIMEOUT_SECONDS = 10.0
SQLITE_BUSY_SHARE = 0.5  # of the database timeout: how long a write waits for SQLite's lock
MYSQL_RECYCLE_SECONDS = 1800.0


def _mysql_connect_args(timeout_s: float) -> dict[str, Any]:
    # connect_timeout bounds the TCP connect and the handshake; reads are bounded by the runner.
    return {"connect_timeout": max(1, round(timeout_s)), "autocommit": True}


def _create_engine(url: str, pool_size: int, echo: bool, timeout_s: float) -> AsyncEngine:
    kwargs: dict[str, Any] = {"echo": echo, "json_serializer": _json_dumps}
    if is_sqlite(url):
        # The busy timeout ends well before the runner's own, so a long lock wait is a (retried)
        # conflict, not a database that stopped answering. SQLite counts the sleeps it planned,
        # not the time they took: on a loaded machine they overshoot, hence half, not most.
        busy_s = timeout_s * SQLITE_BUSY_SHARE
        kwargs["connect_args"] = {"timeout": busy_s}
        if not is_sqlite_memory(url):
            kwargs.update(pool_size=pool_size, max_overflow=pool_size, pool_timeout=timeout_s)
        engine = create_async_engine(url, **kwargs)
        _configure_sqlite(engine, wal=not is_sqlite_memory(url), busy_s=busy_s)
        return engine
    kwargs.update(
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_timeout=MYSQL_POOL_TIMEOUT_SECONDS,
        pool_recycle=MYSQL_RECYCLE_SECONDS,
        pool_pre_ping=True,
        connect_args=_mysql_connect_args(timeout_s),
    )
    engine = create_async_engine(url, **kwargs)
    _configure_mysql(engine, timeout_s)
    return engine


def _driver_reads(engine: AsyncEngine, pool_size: int, timeout_s: float) -> DriverReads | None:
    """The hot point reads' own aiomysql connections, opened with SQLAlchemy's connect arguments."""
    if engine.dialect.name not in ("mysql", "mariadb") or engine.dialect.driver != "aiomysql":
        return None
    import aiomysql

    cargs, cparams = engine.dialect.create_connect_args(engine.url)
    kwargs = {**cparams, **_mysql_connect_args(timeout_s)}

    async def connect() -> Any:
        return await aiomysql.connect(*cargs, **kwargs)

    return DriverReads(
        connect,
        engine.dialect,
        size=pool_size,
        timeout=MYSQL_POOL_TIMEOUT_SECONDS,
        recycle=MYSQL_RECYCLE_SECONDS,
    )


def _configure_mysql(engine: AsyncEngine, timeout_s: float) -> None:
    """Reads run in autocommit mode; writes in an explicit transaction.

    The driver connection is in autocommit mode, so a read (storage.runner: SELECTs, no commit) opens
    no server transaction and costs the pre-ping and its SELECTs only: its rollback, and the pool's
    reset on return, are skipped while the server reports no open transaction. A write transaction
    (the `evigate_write` engine of storage.runner) starts with START TRANSACTION and ends with its
    COMMIT or ROLLBACK as before, so every write keeps its atomicity and locks."""

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        if conn.get_execution_options().get("evigate_write", False):
            conn.exec_driver_sql("START TRANSACTION")

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # The statement timeout, enforced by the server itself: MariaDB's max_statement_time
        # (seconds, every statement), MySQL's max_execution_time (milliseconds, SELECTs).
        cursor = dbapi_connection.cursor()
        cursor.execute("SELECT VERSION()")
        mariadb = "mariadb" in str(cursor.fetchone()[0]).lower()
        if mariadb:
            cursor.execute(f"SET SESSION max_statement_time = {timeout_s:g}")
        else:
            cursor.execute(f"SET SESSION max_execution_time = {int(timeout_s * 1000)}")
        cursor.close()

    dialect = engine.sync_engine.dialect
    _ping_only_idle_connections(engine)
    rollback = dialect.do_rollback

    def do_rollback(dbapi_connection: Any) -> None:
        driver = getattr(dbapi_connection, "driver_connection", None)
        in_transaction = getattr(driver, "get_transaction_status", None)
        if in_transaction is not None and not in_transaction():
            return  # nothing to roll back: no round trip
        rollback(dbapi_connection)

    dialect.do_rollback = do_rollback  # type: ignore[method-assign]


PING_BYPASS_SECONDS = 0.5


def _ping_only_idle_connections(engine: AsyncEngine) -> None:
    """Pre-ping a checked-out connection only when it sat idle in the pool for longer than
    PING_BYPASS_SECONDS (HikariCP's "alive bypass window"): a connection returned a moment ago was
    alive then, and the ping's round trip is most of a hot read's cost. A connection that died inside
    the window fails its statement instead; that invalidates the pool, reads are retried on a fresh
    connection (storage.runner), and a write reports DatabaseUnavailable as during any outage."""
    returned_at: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    def driver(dbapi_connection: Any) -> Any:
        # The adapted connection takes no weak references; the driver's own connection does.
        return getattr(dbapi_connection, "driver_connection", dbapi_connection)

    @event.listens_for(engine.sync_engine.pool, "checkin")
    def _on_checkin(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        if dbapi_connection is not None:
            returned_at[driver(dbapi_connection)] = time.monotonic()

    dialect = engine.sync_engine.dialect
    ping = dialect.do_ping

    def do_ping(dbapi_connection: Any) -> bool:
        last = returned_at.get(driver(dbapi_connection))
        if last is not None and time.monotonic() - last < PING_BYPASS_SECONDS:
            return True
        return ping(dbapi_connection)

    dialect.do_ping = do_ping  # type: ignore[method-assign]


def _configure_sqlite(engine: AsyncEngine, *, wal: bool, busy_s: float) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # Let SQLAlchemy, not the sqlite3 module, decide where transactions begin (see _on_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        if wal:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_s * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A write transaction takes the write lock up front: a deferred transaction that reads and
        # then writes fails with SQLITE_BUSY (no wait) when another writer committed in between.
        write = conn.get_execution_options().get("evigate_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


class Database:
    def __init__(
        self,
        engine: AsyncEngine,
        driver_reads: DriverReads | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self._engine = engine
        self._driver_reads = driver_reads
        self._runner = Runner(
            engine, engine.execution_options(evigate_write=True), driver_reads, timeout_s=timeout_s
        )
        self._repo = Repository(self._runner)
        self._case_vectors = CaseVectors(self._runner)

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        pool_size: int = 10,
        echo: bool = False,
        auto_migrate: bool | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> Database:
        """Open the pool. SQLite is migrated to head automatically; MySQL only when asked
        (`evigate migrate`), otherwise a schema that is behind raises SchemaOutOfDate.
        `timeout_s` bounds every connect, statement and transaction (storage.runner)."""
        url = normalize_url(url)
        sqlite = is_sqlite(url)
        if sqlite and not is_sqlite_memory(url):
            path = make_url(url).database
            if path:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
        if auto_migrate is None:
            auto_migrate = sqlite and not is_sqlite_memory(url)
        if auto_migrate:
            await migrate(url)
        engine = _create_engine(url, pool_size, echo, timeout_s)
        opened = cls(engine, _driver_reads(engine, pool_size, timeout_s), timeout_s)
        try:
            if is_sqlite_memory(url):
                # One shared in-memory connection: migrate through it.
                await opened._migrate_in_place()
            await opened._check_schema(url)
        except BaseException:
            await opened.close()
            raise
        return opened

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    @property
    def repo(self) -> Repository:
        return self._repo

    @property
    def case_vectors(self) -> CaseVectors:
        """The case library's embedding vectors (semantic lookup_knowledge)."""
        return self._case_vectors

    async def close(self) -> None:
        """Closes the pools within the timeout: closing a connection says goodbye to the server,
        and a server that no longer answers (a partition) would hold that forever, so past the
        timeout the pool is dropped without the goodbyes (the sockets end with the process)."""
        if self._driver_reads is not None:
            await self._driver_reads.close()
        try:
            async with asyncio.timeout(self._runner.timeout_s):
                await self._engine.dispose()
        except TimeoutError:
            log.warning("database did not answer while closing; its connections are dropped")
            await self._engine.dispose(close=False)

    async def ping(self) -> bool:
        """Health check: False, never an exception, when the database does not answer within the
        timeout. It also tells the runner's breaker: calls fail fast while the ping fails, and the
        first ping that gets an answer lets them through again."""
        runner = self._runner
        try:
            async with asyncio.timeout(runner.timeout_s), self._engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception as exc:
            runner.breaker.trip(f"health ping failed: {type(exc).__name__}: {exc}")
            return False
        runner.breaker.close()
        return True

    async def _migrate_in_place(self) -> None:
        from evigate.storage.migration import run_alembic

        async with self._engine.begin() as conn:
            await conn.run_sync(run_alembic, "upgrade", "head")

    async def _check_schema(self, url: str) -> None:
        async def work(conn: Any) -> str | None:
            result: str | None = await conn.run_sync(current_revision_sync)
            return result

        current = await self._runner.read(work)
        head = head_revision()
        if current != head:
            shown = make_url(url).render_as_string(hide_password=True)
            raise SchemaOutOfDate(
                f"database schema is at revision {current or 'none (empty database)'}, this build needs "
                f"{head}: run `evigate migrate --database-url {shown}` first"
            )
