"""V001: diagnosis_session.

Revision ID: v001
Revises: None
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.models import MYSQL_TABLE_ARGS
from evigate.storage.types import BigIntPk, UtcDateTime

revision = "v001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "diagnosis_session",
        sa.Column("id", BigIntPk, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.UniqueConstraint("session_id", name="uq_diagnosis_session_session_id"),
        **MYSQL_TABLE_ARGS,
    )
    op.create_index(
        "ix_diagnosis_session_status_created", "diagnosis_session", ["status", "created_at", "id"]
    )


def downgrade() -> None:
    op.drop_table("diagnosis_session")
