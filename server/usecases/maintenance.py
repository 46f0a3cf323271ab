"""The database chores the CLI runs without a server: bring the schema up to date."""

from __future__ import annotations

from evigate.storage import migrate


async def migrate_database(url: str) -> None:
    """Applies every migration the database at `url` has not had yet."""
    await migrate(url)
