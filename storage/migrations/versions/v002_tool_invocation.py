"""V002: tool_invocation, one row per tool call; its id is the citable source_invocation_id.

Revision ID: v002
Revises: v001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.models import MYSQL_TABLE_ARGS
from evigate.storage.types import BigIntPk, Float64, Json, UtcDateTime

revision = "v002"
down_revision = "v001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tool_invocation",
        sa.Column("id", BigIntPk, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("tool_name", sa.String(64), nullable=False),
        sa.Column("arguments", Json, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("raw_result", Json, nullable=True),
        sa.Column("latency_ms", Float64, nullable=False, server_default=sa.text("0")),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["diagnosis_session.session_id"], name="fk_tool_invocation_session_id"
        ),
        **MYSQL_TABLE_ARGS,
    )
    op.create_index("ix_tool_invocation_session_id", "tool_invocation", ["session_id", "id"])


def downgrade() -> None:
    op.drop_table("tool_invocation")
