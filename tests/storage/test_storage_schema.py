"""Migrations: the migrated MariaDB schema equals storage/schema_mysql.sql; round trips on both
backends; the models agree with the migrations."""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pymysql
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from pymysql.constants import CLIENT
from sqlalchemy import inspect
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from evigate.storage import Database, migrate
from evigate.storage.migration import current_revision, downgrade, head_revision
from evigate.storage.models import Base
from tests.storage.storage_helpers import open_fresh_sqlite_worker

DDL = Path(__file__).resolve().parents[2] / "storage" / "schema_mysql.sql"

INFORMATION_SCHEMA = {
    "tables": (
        "SELECT TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s"
    ),
    "columns": (
        "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, "
        "CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s"
    ),
    "indexes": (
        "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME "
        "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s"
    ),
    "constraints": (
        "SELECT TABLE_NAME, CONSTRAINT_NAME, CONSTRAINT_TYPE "
        "FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = %s"
    ),
    "key_columns": (
        "SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION, REFERENCED_TABLE_NAME, "
        "REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s"
    ),
}


def _connect(url: str, **kwargs: Any) -> pymysql.connections.Connection:
    parts = urlsplit(url)
    return pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user="root",
        password="",
        database=parts.path.lstrip("/"),
        charset="utf8mb4",
        **kwargs,
    )


def _describe(url: str) -> dict[str, list[tuple[Any, ...]]]:
    name = urlsplit(url).path.lstrip("/")
    conn = _connect(url)
    try:
        described = {}
        with conn.cursor() as cursor:
            for key, sql in INFORMATION_SCHEMA.items():
                cursor.execute(sql, (name,))
                described[key] = sorted(cursor.fetchall(), key=repr)
            cursor.execute("SELECT version_num FROM alembic_version")
            described["version"] = list(cursor.fetchall())
        return described
    finally:
        conn.close()


def _load_ddl(url: str) -> None:
    conn = _connect(url, client_flag=CLIENT.MULTI_STATEMENTS)
    try:
        with conn.cursor() as cursor:
            cursor.execute(DDL.read_text(encoding="utf-8"))
            while cursor.nextset():
                pass
        conn.commit()
    finally:
        conn.close()


async def test_migrated_mariadb_matches_reference_ddl(mysql_database_factory: Any) -> None:
    migrated, reference = mysql_database_factory(), mysql_database_factory()
    await migrate(migrated)
    _load_ddl(reference)
    got, want = _describe(migrated), _describe(reference)
    for key in want:
        assert got[key] == want[key], key
    assert want["version"] == [(head_revision(),)]

    columns = {(row[0], row[1]): row for row in got["columns"]}
    # The V008 contract, spelled out.
    assert columns[("diagnosis_session", "answer")][3] == "longtext"
    assert columns[("diagnosis_session", "feedback")][3:5] == ("varchar(16)", "YES")
    assert columns[("diagnosis_session", "status")][3:5] == ("varchar(16)", "NO")
    assert columns[("tool_invocation", "id")][3] == "bigint(20)"
    assert columns[("tool_invocation", "id")][6] == "auto_increment"
    constraints = {(row[0], row[1]): row[2] for row in got["constraints"]}
    assert constraints[("case_library", "uq_case_library_diagnosis_id")] == "UNIQUE"
    assert constraints[("diagnosis_session", "self_evaluation")] == "CHECK"  # MariaDB's JSON
    assert constraints[("tool_invocation", "retrieval_details")] == "CHECK"
    assert {row[2] for row in got["tables"]} == {"utf8mb4_unicode_ci"}
    assert {row[7] for row in got["columns"]} <= {None, "utf8mb4"}


async def test_reference_ddl_database_opens_without_migrating(mysql_database_factory: Any) -> None:
    url = mysql_database_factory()
    _load_ddl(url)
    db = await Database.open(url)
    try:
        await db.repo.create_session("s", "q", "zh", "o")
    finally:
        await db.close()


async def test_downgrade_upgrade_round_trip_keeps_data(database_url: str, db_backend: str) -> None:
    await migrate(database_url)
    db = await Database.open(database_url)
    try:
        await db.repo.create_session("kept", "查询 😀", "zh", "o")
        await db.repo.finish_success("kept", "答案", {}, {}, [], {})
    finally:
        await db.close()
    await downgrade(database_url, "v008")
    assert await current_revision(database_url) == "v008"
    await migrate(database_url)
    await downgrade(database_url, "base")
    assert await current_revision(database_url) is None
    assert await _tables(database_url) <= {"alembic_version"}
    await migrate(database_url)
    assert await current_revision(database_url) == head_revision()
    await downgrade(database_url, "v008")
    await migrate(database_url, "v010")
    await migrate(database_url)
    db = await Database.open(database_url)
    try:
        assert await db.repo.get_session("kept") is None  # dropped with the tables at base
        await db.repo.create_session("again", "q", "zh", "o")
    finally:
        await db.close()


async def test_downgrade_to_v008_keeps_v008_rows(database_url: str) -> None:
    await migrate(database_url)
    db = await Database.open(database_url)
    try:
        await db.repo.create_session("kept", "查询 😀", "zh", "o")
        await db.repo.finish_success("kept", "答案 ✅", {}, {}, [], {})
    finally:
        await db.close()
    await downgrade(database_url, "v008")
    assert "job" not in await _tables(database_url)
    await migrate(database_url)
    db = await Database.open(database_url)
    try:
        session = await db.repo.get_session("kept")
        assert session is not None
        assert (session.answer, session.status, session.language) == ("答案 ✅", "SUCCESS", "zh")
    finally:
        await db.close()


async def _tables(url: str) -> set[str]:
    engine = create_async_engine(url, poolclass=NullPool)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
    finally:
        await engine.dispose()


async def test_models_match_migrations(database_url: str) -> None:
    await migrate(database_url)
    engine = create_async_engine(database_url, poolclass=NullPool)

    def diff(conn: Connection) -> list[Any]:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))

    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(diff) == []
    finally:
        await engine.dispose()


@pytest.mark.parametrize("revision", ["v008"])
async def test_v008_adds_answer(database_url: str, revision: str) -> None:
    await migrate(database_url, "v007")
    engine = create_async_engine(database_url, poolclass=NullPool)

    def columns(conn: Connection) -> set[str]:
        return {c["name"] for c in inspect(conn).get_columns("diagnosis_session")}

    try:
        async with engine.connect() as conn:
            assert "answer" not in await conn.run_sync(columns)
        await migrate(database_url, revision)
        async with engine.connect() as conn:
            assert "answer" in await conn.run_sync(columns)
    finally:
        await engine.dispose()


async def test_processes_opening_a_fresh_sqlite_file_at_once(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'fresh' / 'evigate.db'}"
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(max_workers=3, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = await asyncio.gather(
            *(loop.run_in_executor(pool, open_fresh_sqlite_worker, url, f"s{i}") for i in range(3))
        )
    assert sorted(done) == ["s0", "s1", "s2"]
    assert await current_revision(url) == head_revision()
