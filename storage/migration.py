"""Programmatic alembic: the script directory ships inside the package, so it works when installed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry, NullPool

from evigate.storage.errors import DatabaseUnavailable
from evigate.storage.failures import is_connection_error
from evigate.storage.urls import normalize_url

SCRIPT_LOCATION = Path(__file__).resolve().parent / "migrations"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships revisions
        raise RuntimeError("no alembic revisions found")
    return head


def current_revision_sync(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def run_alembic(connection: Connection, action: str, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    if action == "upgrade":
        command.upgrade(config, revision)
    else:
        command.downgrade(config, revision)


async def _apply(url: str, action: str, revision: str) -> None:
    engine = create_async_engine(normalize_url(url), poolclass=NullPool)
    if engine.dialect.name == "sqlite":
        _serialize_sqlite_migrations(engine)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(run_alembic, action, revision)
    except Exception as exc:
        if is_connection_error(exc):
            raise DatabaseUnavailable(f"database unreachable: {exc}") from exc
        raise
    finally:
        await engine.dispose()


def _serialize_sqlite_migrations(engine: AsyncEngine) -> None:
    """Run the whole migration in one BEGIN IMMEDIATE transaction (SQLite DDL is transactional):
    processes opening the same fresh file at once queue on the write lock, and the later ones
    find the schema at head. Foreign keys stay off: batch mode drops and recreates tables."""

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=OFF")
        cursor.execute("PRAGMA busy_timeout=60000")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


async def migrate(url: str, revision: str = "head") -> None:
    """alembic upgrade to `revision` (what `evigate migrate` runs)."""
    await _apply(url, "upgrade", revision)


async def downgrade(url: str, revision: str) -> None:
    await _apply(url, "downgrade", revision)


async def current_revision(url: str) -> str | None:
    engine = create_async_engine(normalize_url(url), poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(current_revision_sync)
    finally:
        await engine.dispose()
