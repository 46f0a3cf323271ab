"""After V008: job, the durable queue (evidence_score evaluations first).

Revision ID: v011
Revises: v010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.models import MYSQL_TABLE_ARGS
from evigate.storage.types import BigIntPk, Json, UtcDateTime

revision = "v011"
down_revision = "v010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job",
        sa.Column("id", BigIntPk, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("payload", Json, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("available_at", UtcDateTime(), nullable=False),
        sa.Column("lease_owner", sa.String(128), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        **MYSQL_TABLE_ARGS,
    )
    op.create_index("ix_job_claim", "job", ["kind", "status", "available_at"])
    op.create_index("ix_job_status_created", "job", ["status", "created_at"])
    op.create_index("ix_job_session_id", "job", ["session_id"])


def downgrade() -> None:
    op.drop_table("job")
