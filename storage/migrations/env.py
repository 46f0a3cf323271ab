"""alembic environment: always driven programmatically by storage.migration with a live connection."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from evigate.storage.models import Base

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("run migrations through storage.migration (evigate migrate), not the alembic CLI")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    # SQLite cannot ALTER most things in place; batch mode recreates the table.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
