"""V005: case_library, cases distilled from sessions marked useful.

Revision ID: v005
Revises: v004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.models import MYSQL_TABLE_ARGS
from evigate.storage.types import BigIntPk, LongText, UtcDateTime

revision = "v005"
down_revision = "v004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "case_library",
        sa.Column("id", BigIntPk, primary_key=True, autoincrement=True),
        sa.Column("case_id", sa.String(64), nullable=False),
        sa.Column("diagnosis_id", sa.String(64), nullable=False),
        sa.Column("source_type", sa.String(16), nullable=False),
        sa.Column("fault_category", sa.String(32), nullable=False),
        sa.Column("title", sa.String(255), nullable=False),
        sa.Column("root_cause", LongText, nullable=False),
        sa.Column("solution", LongText, nullable=False),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.UniqueConstraint("case_id", name="uq_case_library_case_id"),
        sa.UniqueConstraint("diagnosis_id", name="uq_case_library_diagnosis_id"),
        sa.ForeignKeyConstraint(
            ["diagnosis_id"], ["diagnosis_session.session_id"], name="fk_case_library_diagnosis_id"
        ),
        **MYSQL_TABLE_ARGS,
    )
    op.create_index("ix_case_library_created", "case_library", ["created_at", "id"])


def downgrade() -> None:
    op.drop_table("case_library")
