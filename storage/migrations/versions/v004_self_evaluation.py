"""V004: diagnosis_session.self_evaluation (evidence score and verifier evaluation).

Revision ID: v004
Revises: v003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.types import Json

revision = "v004"
down_revision = "v003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("diagnosis_session", sa.Column("self_evaluation", Json, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("diagnosis_session") as batch:
        batch.drop_column("self_evaluation")
