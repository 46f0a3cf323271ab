"""V006: diagnosis_session.feedback (useful / not_useful / NULL); bad cases are feedback = 'not_useful'.

Revision ID: v006
Revises: v005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "v006"
down_revision = "v005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("diagnosis_session", sa.Column("feedback", sa.String(16), nullable=True))
    op.create_index(
        "ix_diagnosis_session_feedback_created", "diagnosis_session", ["feedback", "created_at", "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_diagnosis_session_feedback_created", table_name="diagnosis_session")
    with op.batch_alter_table("diagnosis_session") as batch:
        batch.drop_column("feedback")
