"""Shared database fixtures: every storage test runs against SQLite and MariaDB.

MariaDB is 127.0.0.1:3306, root, empty password (EVIGATE_TEST_MYSQL overrides the server URL
without a database name). Each test gets its own database `evigate_test_<uuid hex>`, dropped
afterwards.

Property tests: under CI (the CI environment variable) hypothesis runs derandomized, so a CI run is
repeatable; development runs keep exploring new examples.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pymysql
import pytest
from hypothesis import is_hypothesis_test, settings

from evigate.storage import Database, migrate

# The scripted OpenAI-compatible server's fixtures (script, fake, agents), for every folder.
pytest_plugins = ("tests.support.scripted_llm",)

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Folders whose tests are slow by nature: end-to-end runs through a real server, channel or browser,
# the worlds, the real sources and the databases. `pytest -m "not slow"` leaves them out; CI does not.
SLOW_FOLDERS = frozenset(
    {"server", "worlds", "web", "peer", "loop", "reliability", "bench", "sources", "pipeline", "storage"}
    | {"contract", "fuzz", "mcp"}
)
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks `slow` the tests of SLOW_FOLDERS and every property test (hypothesis explores many
    examples); a single slow test elsewhere carries the marker itself."""
    for item in items:
        parts = item.path.resolve().relative_to(TESTS).parts
        test = getattr(item, "obj", None)
        if (len(parts) > 1 and parts[0] in SLOW_FOLDERS) or (test is not None and is_hypothesis_test(test)):
            item.add_marker(pytest.mark.slow)


MYSQL_SERVER = os.environ.get("EVIGATE_TEST_MYSQL", "mysql+aiomysql://root:@127.0.0.1:3306")
BACKENDS = ["sqlite", "mariadb"]


def _mysql_admin() -> pymysql.connections.Connection:
    return pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", charset="utf8mb4")


@pytest.fixture
def mysql_database_factory() -> Iterator[Callable[[], str]]:
    """Creates uniquely named scratch MariaDB databases (URLs) and drops them all at teardown."""
    created: list[str] = []

    def create() -> str:
        name = f"evigate_test_{uuid.uuid4().hex}"
        admin = _mysql_admin()
        try:
            with admin.cursor() as cursor:
                cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
        finally:
            admin.close()
        created.append(name)
        return f"{MYSQL_SERVER}/{name}?charset=utf8mb4"

    yield create
    admin = _mysql_admin()
    try:
        with admin.cursor() as cursor:
            for name in created:
                cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
    finally:
        admin.close()


@pytest.fixture(params=BACKENDS)
def db_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def database_url(db_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """An empty database on each backend (SQLite file in tmp_path, or a fresh MariaDB database)."""
    if db_backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'evigate-test.db'}"
        return
    factory: Callable[[], str] = request.getfixturevalue("mysql_database_factory")
    yield factory()


@pytest.fixture
async def db(database_url: str, db_backend: str) -> AsyncIterator[Database]:
    """An open Database migrated to head (MariaDB explicitly, as `evigate migrate` would)."""
    if db_backend == "mariadb":
        await migrate(database_url)
    database = await Database.open(database_url, pool_size=5)
    try:
        yield database
    finally:
        await database.close()
