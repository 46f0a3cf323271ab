"""After V008: what the trace replay needs on diagnosis_session, and the owning replica.

Revision ID: v009
Revises: v008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.types import Json

revision = "v009"
down_revision = "v008"
branch_labels = None
depends_on = None

_JSON_COLUMNS = ("planner_plan", "meta", "composer_output", "extras")


def upgrade() -> None:
    op.add_column(
        "diagnosis_session",
        sa.Column("language", sa.String(16), nullable=False, server_default=sa.text("'zh'")),
    )
    op.add_column(
        "diagnosis_session",
        sa.Column("owner", sa.String(128), nullable=False, server_default=sa.text("''")),
    )
    op.add_column("diagnosis_session", sa.Column("failure_reason", sa.Text(), nullable=True))
    for name in _JSON_COLUMNS:
        op.add_column("diagnosis_session", sa.Column(name, Json, nullable=True))
    op.create_index("ix_diagnosis_session_owner_status", "diagnosis_session", ["owner", "status"])


def downgrade() -> None:
    op.drop_index("ix_diagnosis_session_owner_status", table_name="diagnosis_session")
    with op.batch_alter_table("diagnosis_session") as batch:
        for name in ("language", "owner", "failure_reason", *_JSON_COLUMNS):
            batch.drop_column(name)
