"""Transactions with one boundary each: error translation, retries, and cleanup on cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from evigate.storage.breaker import Breaker
from evigate.storage.errors import DatabaseUnavailable, StorageError
from evigate.storage.failures import Failure, Statement, classify, timed_out

if TYPE_CHECKING:
    from evigate.storage.driver_reads import DriverReads

T = TypeVar("T")
AnyRow = Row[*tuple[Any, ...]]
Work = Callable[[AsyncConnection], Awaitable[T]]

log = logging.getLogger("evigate.storage")

READ_ATTEMPTS = 4
WRITE_ATTEMPTS = 5
BACKOFF_SECONDS = 0.05
# How long one attempt (connect, statements, commit) may take before the database counts as not
# answering: a partition drops packets, and nothing else would ever end the wait.
DEFAULT_TIMEOUT_SECONDS = 10.0


class Runner:
    """Runs one unit of work in one transaction on one pooled connection.

    Reads are retried on transient failures (unreachable database, lock conflicts); writes only on
    lock conflicts, where the database has certainly rolled the transaction back. A cancelled call
    invalidates its connection (a half-read result set cannot go back to the pool) and returns it.

    Every attempt is bounded by `timeout_s`. A database that did not answer in time, or that reads
    still cannot reach after their retries, opens the breaker (storage.breaker): calls then fail at
    once with DatabaseUnavailable and a retry delay until a probe or the health ping gets an answer.

    A read is not committed: closing the connection rolls its transaction back, and that rollback
    is also the pool's reset, so the pool does not send a second one. On SQLite a read is one
    deferred transaction (a snapshot across its SELECTs). On MySQL the connections are in autocommit
    mode (storage.db): a read is the pre-ping and its SELECTs, each its own consistent read, with no
    transaction to end; a write is START TRANSACTION … COMMIT.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        write_engine: AsyncEngine,
        driver_reads: DriverReads | None = None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self.engine = engine
        self._write_engine = write_engine
        self._driver_reads = driver_reads
        self.dialect = engine.dialect.name
        self.timeout_s = timeout_s
        self.breaker = Breaker()

    @property
    def is_mysql(self) -> bool:
        return self.dialect in ("mysql", "mariadb")

    async def read(self, work: Work[T]) -> T:
        return await self._attempts(
            lambda: self._once(self.engine, work, commit=False), READ_ATTEMPTS, write=False
        )

    async def read_first(self, statement: Statement, params: dict[str, Any]) -> Sequence[Any] | None:
        """The first row of one SELECT whose columns need no type conversion, read like `read`
        (same retries and errors). On MySQL it runs straight on the driver (storage.driver_reads)."""
        driver_reads = self._driver_reads
        if driver_reads is not None:
            return await self._attempts(
                lambda: driver_reads.first(statement, params), READ_ATTEMPTS, write=False
            )

        async def work(conn: AsyncConnection) -> AnyRow | None:
            return (await conn.execute(statement, params)).first()

        return await self.read(work)

    async def write(self, work: Work[T]) -> T:
        return await self._attempts(
            lambda: self._once(self._write_engine, work, commit=True), WRITE_ATTEMPTS, write=True
        )

    async def _attempts(self, once: Callable[[], Awaitable[T]], attempts: int, *, write: bool) -> T:
        retry_unavailable = not write
        breaker = self.breaker
        for attempt in range(1, attempts + 1):
            probe = breaker.admit()  # raises at once while the database is known unreachable
            try:
                async with asyncio.timeout(self.timeout_s):
                    result = await once()
            except DatabaseUnavailable as exc:  # the driver reads' own connect failed
                if probe or not write:
                    breaker.trip(str(exc), probe=probe)
                raise
            except StorageError:
                breaker.end_probe()
                raise
            except asyncio.CancelledError:
                breaker.end_probe()
                raise
            except Exception as exc:
                failure = classify(exc)
                late = timed_out(exc)
                retry = failure is Failure.CONFLICT or (failure is Failure.UNAVAILABLE and retry_unavailable)
                if late or (failure is Failure.UNAVAILABLE and (probe or (retry and attempt == attempts))):
                    # No answer in time, or still unreachable after every retry: fail fast from now.
                    reason = f"no answer within {self.timeout_s:g} s" if late else f"{exc}"
                    breaker.trip(reason, probe=probe)
                    raise DatabaseUnavailable(f"database unreachable: {reason}", breaker.delay) from exc
                breaker.end_probe()
                if retry and attempt < attempts:
                    delay = BACKOFF_SECONDS * 2 ** (attempt - 1)
                    log.warning("storage retry attempt=%d failure=%s error=%s", attempt, failure.value, exc)
                    await asyncio.sleep(delay)
                    continue
                if failure is Failure.UNAVAILABLE:
                    raise DatabaseUnavailable(f"database unreachable: {exc}") from exc
                if failure is Failure.CONFLICT:  # still locked after every retry: busy, try later
                    raise DatabaseUnavailable(f"database busy: {exc}") from exc
                raise
            if breaker.open:
                breaker.close()  # an answer: the database is back
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    async def _once(self, engine: AsyncEngine, work: Work[T], *, commit: bool) -> T:
        conn = await engine.connect()
        try:
            # A read's transaction begins with its first statement (SQLAlchemy's autobegin).
            transaction = await conn.begin() if commit else None
            try:
                result = await self._work(conn, work)
            except asyncio.CancelledError:
                raise
            except BaseException:
                if transaction is not None:
                    await transaction.rollback()
                raise
            if transaction is not None:
                await transaction.commit()
            return result  # a read: conn.close() below rolls back, in place of the pool's reset
        except asyncio.CancelledError:
            await _abandon(conn)
            raise
        finally:
            await conn.close()

    async def _work(self, conn: AsyncConnection, work: Work[T]) -> T:
        if self.dialect != "sqlite":
            # Cancelling mid-statement makes SQLAlchemy invalidate the aiomysql connection (its
            # socket is closed); the pool then replaces it.
            return await work(conn)
        # aiosqlite runs the statement in a thread that cancellation cannot stop, and closing the
        # connection would wait for it: interrupt the statement first, then let the call unwind.
        driver: Any = conn.sync_connection.connection.driver_connection if conn.sync_connection else None
        inner = asyncio.ensure_future(work(conn))
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:
            if driver is not None:
                await driver.interrupt()
            with contextlib.suppress(BaseException):
                await inner
            raise


async def _abandon(conn: AsyncConnection) -> None:
    """Drop a connection whose state is unknown after a cancellation instead of reusing it."""
    if conn.invalidated:
        return
    try:
        await conn.invalidate()
    except Exception as exc:  # cleanup must not mask the cancellation
        log.debug("storage could not invalidate a cancelled connection: %s", exc)
