"""After V008: case_library.retired_at, set while the case's session is marked not_useful.

A retired case is no longer retrieved by lookup_knowledge but stays in the table for audit; useful
feedback again clears it. Cases of sessions already marked not_useful are retired here.

Revision ID: v012
Revises: v011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.types import UtcDateTime, utcnow

revision = "v012"
down_revision = "v011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("case_library", sa.Column("retired_at", UtcDateTime(), nullable=True))
    retired = sa.table("case_library", sa.column("retired_at", UtcDateTime()), sa.column("diagnosis_id"))
    sessions = sa.table("diagnosis_session", sa.column("session_id"), sa.column("feedback"))
    op.execute(
        retired.update()
        .where(
            retired.c.diagnosis_id.in_(
                sa.select(sessions.c.session_id).where(sessions.c.feedback == "not_useful")
            )
        )
        .values(retired_at=utcnow())
    )


def downgrade() -> None:
    with op.batch_alter_table("case_library") as batch:
        batch.drop_column("retired_at")
