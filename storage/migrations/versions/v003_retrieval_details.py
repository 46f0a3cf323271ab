"""V003: tool_invocation.retrieval_details (evidence_status, match_level, evidence_refs).

Revision ID: v003
Revises: v002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.types import Json

revision = "v003"
down_revision = "v002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tool_invocation", sa.Column("retrieval_details", Json, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tool_invocation") as batch:
        batch.drop_column("retrieval_details")
