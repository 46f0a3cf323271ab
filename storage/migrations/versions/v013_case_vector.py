"""After V008: case_vector, the case library's embedding vectors (semantic lookup_knowledge).

Keyed by (model_id, content_hash): the vector space and the SHA-256 of the text embedded.

Revision ID: v013
Revises: v012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.models import MYSQL_TABLE_ARGS
from evigate.storage.types import BigIntPk, UtcDateTime

revision = "v013"
down_revision = "v012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "case_vector",
        sa.Column("id", BigIntPk, primary_key=True, autoincrement=True),
        sa.Column("model_id", sa.String(128), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("dimension", sa.Integer(), nullable=False),
        sa.Column(
            "vector", sa.Text(), nullable=False, comment="base64 of little-endian float32, dimension values"
        ),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.UniqueConstraint("model_id", "content_hash", name="uq_case_vector_model_id_content_hash"),
        **MYSQL_TABLE_ARGS,
    )


def downgrade() -> None:
    op.drop_table("case_vector")
