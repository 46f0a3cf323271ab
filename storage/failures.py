"""What a database error means for the caller: the database is unavailable (retry elsewhere or
later), the transaction lost a conflict (safe to run again), or something else. Shared by the
runner and the driver-level reads, which both see these errors, so neither imports the other."""

from __future__ import annotations

import sqlite3
from enum import Enum
from typing import Any

from pymysql.err import MySQLError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.sql import Select, TextClause

Statement = Select[*tuple[Any, ...]] | TextClause  # what read_first runs

# MySQL client/server error numbers meaning "cannot talk to the database".
_MYSQL_UNAVAILABLE = frozenset({1040, 1045, 1049, 1053, 1927, 2002, 2003, 2005, 2006, 2013, 2055})
# Deadlock / lock wait timeout: the transaction was rolled back, so running it again is safe.
_MYSQL_CONFLICT = frozenset({1205, 1213})
# The server's own statement timeout (MariaDB max_statement_time, MySQL max_execution_time).
_MYSQL_TIMEOUT = frozenset({1969, 3024})


class Failure(Enum):
    UNAVAILABLE = "unavailable"
    CONFLICT = "conflict"
    OTHER = "other"


def classify(exc: BaseException) -> Failure:
    if isinstance(exc, PoolTimeout):  # every pooled connection busy: overloaded, try again later
        return Failure.UNAVAILABLE
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return Failure.UNAVAILABLE
        return _driver_failure(exc.orig) if exc.orig is not None else Failure.OTHER
    return _driver_failure(exc)


def _driver_failure(exc: BaseException) -> Failure:
    """A driver's own exception (what SQLAlchemy wraps, or what storage.driver_reads sees bare)."""
    if isinstance(exc, sqlite3.OperationalError):
        message = str(exc).lower()
        if "locked" in message or "busy" in message:
            return Failure.CONFLICT
        if "unable to open" in message or "disk i/o" in message:
            return Failure.UNAVAILABLE
        return Failure.OTHER
    if isinstance(exc, MySQLError):
        code = exc.args[0] if exc.args else None
        if code in _MYSQL_UNAVAILABLE or code in _MYSQL_TIMEOUT:
            return Failure.UNAVAILABLE
        if code in _MYSQL_CONFLICT:
            return Failure.CONFLICT
        return Failure.OTHER
    if isinstance(exc, (OSError, TimeoutError)):
        return Failure.UNAVAILABLE
    return Failure.OTHER


def timed_out(exc: BaseException) -> bool:
    """No answer in time: our own timeout, or the server's statement timeout."""
    if isinstance(exc, TimeoutError):
        return True
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    return isinstance(orig, MySQLError) and bool(orig.args) and orig.args[0] in _MYSQL_TIMEOUT


def is_connection_error(exc: BaseException) -> bool:
    return classify(exc) is Failure.UNAVAILABLE
