"""V007: index for listing sessions newest first.

Revision ID: v007
Revises: v006
"""

from __future__ import annotations

from alembic import op

revision = "v007"
down_revision = "v006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_diagnosis_session_created", "diagnosis_session", ["created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_diagnosis_session_created", table_name="diagnosis_session")
