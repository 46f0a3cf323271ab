"""V008: diagnosis_session.answer, the full answer that useful cases are built from.

Revision ID: v008
Revises: v007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.types import LongText

revision = "v008"
down_revision = "v007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "diagnosis_session",
        sa.Column("answer", LongText, nullable=True, comment="Agent 返回给用户的完整答案"),
    )


def downgrade() -> None:
    with op.batch_alter_table("diagnosis_session") as batch:
        batch.drop_column("answer")
