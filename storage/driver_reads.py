"""Point reads on MySQL straight through the driver, for the statements a busy RPC runs on every call.

SQLAlchemy's work around one statement (pool checkout and return with their events, the execution
context, result processing) costs several times the driver's own: measured here ~400 µs of CPU per
SELECT against ~100 µs for the same SELECT on an aiomysql connection. For the repeat-feedback check,
that overhead was most of a SubmitFeedback call. These reads run the statement SQLAlchemy compiled,
with SQLAlchemy's own connect arguments, on a few aiomysql connections kept here; every other
statement, and every write, stays on the SQLAlchemy pool.

The connections are in autocommit mode, like the pool's (storage.db): each SELECT is one consistent
read of committed data. Only statements whose columns need no type conversion (strings, numbers)
belong here: rows come back as the driver returns them.

Failures: a connection whose statement fails or is cancelled is closed, never reused; a lost
connection also closes the idle ones (they are likely just as dead), and storage.runner retries
the read as it retries any read.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.engine import Dialect

from evigate.storage.errors import DatabaseUnavailable
from evigate.storage.failures import Statement, is_connection_error

Connect = Callable[[], Awaitable[Any]]  # opens one aiomysql connection
MAX_COMPILED = 64


class DriverReads:
    def __init__(
        self, connect: Connect, dialect: Dialect, *, size: int, timeout: float, recycle: float
    ) -> None:
        self._connect = connect
        self._dialect = dialect
        self._idle: list[tuple[Any, float]] = []  # (connection, opened at), most recently used last
        self._slots = asyncio.Semaphore(size)
        self._timeout = timeout
        self._recycle = recycle
        # statement -> its SQL and parameter order; the callers' statements are module constants
        self._compiled: dict[Statement, tuple[str, tuple[str, ...]]] = {}
        self._closed = False

    async def first(self, statement: Statement, params: dict[str, Any]) -> tuple[Any, ...] | None:
        """The first row of one SELECT, or None."""
        sql, names = self._sql(statement)
        await self._acquire_slot()
        try:
            conn, opened = self._idle.pop() if self._idle else (await self._open(), time.monotonic())
            try:
                cursor = await conn.cursor()
                await cursor.execute(sql, tuple(params[name] for name in names))
                row: tuple[Any, ...] | None = await cursor.fetchone()
                await cursor.close()
            except BaseException as error:
                conn.close()  # its state is unknown: a half-read result must not reach the next read
                if is_connection_error(error):
                    self._drop_idle()
                raise
            if self._closed or time.monotonic() - opened > self._recycle:
                conn.close()
            else:
                self._idle.append((conn, opened))
            return row
        finally:
            self._slots.release()

    async def close(self) -> None:
        self._closed = True
        self._drop_idle()

    def _sql(self, statement: Statement) -> tuple[str, tuple[str, ...]]:
        entry = self._compiled.get(statement)
        if entry is None:
            if len(self._compiled) >= MAX_COMPILED:  # a caller building statements per call
                self._compiled.clear()
            compiled = statement.compile(dialect=self._dialect)
            entry = self._compiled[statement] = (compiled.string, tuple(compiled.positiontup or ()))
        return entry

    async def _acquire_slot(self) -> None:
        if not self._slots.locked():
            await self._slots.acquire()
            return
        try:
            async with asyncio.timeout(self._timeout):
                await self._slots.acquire()
        except TimeoutError:
            raise DatabaseUnavailable(
                f"every database connection for reads busy for {self._timeout:g} s"
            ) from None

    async def _open(self) -> Any:
        if self._closed:
            raise DatabaseUnavailable("the database is closed")
        return await self._connect()

    def _drop_idle(self) -> None:
        idle, self._idle = self._idle, []
        for conn, _opened in idle:
            conn.close()
