"""Fixtures: server subprocesses killed at teardown, fresh SQLite files and MariaDB databases."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evigate.storage import migrate
from tests.support.server_proc import ServerProc

ServerFactory = Callable[..., ServerProc]


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[ServerFactory]:
    """Creates (not starts) ServerProcs in tmp_path; every one still running is killed at teardown."""
    made: list[ServerProc] = []

    def make(database_url: str, **kwargs: Any) -> ServerProc:
        name = kwargs.pop("name", f"server{len(made) + 1}")
        proc = ServerProc(tmp_path / name, database_url, name=name, **kwargs)
        made.append(proc)
        return proc

    yield make
    for proc in made:
        proc.reap()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'evigate.db'}"


@pytest.fixture
async def mariadb_url(mysql_database_factory: Callable[[], str]) -> str:
    """A fresh MariaDB database migrated to head (as `evigate migrate` would)."""
    url = mysql_database_factory()
    await migrate(url)
    return url


@pytest.fixture(params=["sqlite", "mariadb"])
async def any_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each backend in turn: a fresh SQLite file, then a fresh migrated MariaDB database."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'evigate.db'}"
    factory: Callable[[], str] = request.getfixturevalue("mysql_database_factory")
    url = factory()
    await migrate(url)
    return url
