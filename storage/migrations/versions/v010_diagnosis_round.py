"""After V008: diagnosis_round, one row per Executor → Gatekeeper → Verifier round.

Revision ID: v010
Revises: v009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.models import MYSQL_TABLE_ARGS
from evigate.storage.types import Json, LongText, UtcDateTime

revision = "v010"
down_revision = "v009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "diagnosis_round",
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("executor_raw_text", LongText, nullable=False),
        sa.Column("executor_output", Json, nullable=True),
        sa.Column("parse_status", Json, nullable=False),
        sa.Column("gatekeeper_result", Json, nullable=True),
        sa.Column("verdict", Json, nullable=True),
        sa.Column("proposed_verdict", sa.String(16), nullable=True),
        sa.Column("verdict_override_reason", sa.Text(), nullable=False),
        sa.Column("retry_context", Json, nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("session_id", "round", name="pk_diagnosis_round"),
        sa.ForeignKeyConstraint(
            ["session_id"], ["diagnosis_session.session_id"], name="fk_diagnosis_round_session_id"
        ),
        **MYSQL_TABLE_ARGS,
    )


def downgrade() -> None:
    op.drop_table("diagnosis_round")
