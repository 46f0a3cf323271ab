"""After v013: case_library's structured fields — error_code, services, alert_names.

Extracted from the session's verified evidence when useful feedback makes a case (rules.case_facts);
`fault_category` now holds a catalog category instead of the temporary GENERAL. Existing GENERAL
cases keep GENERAL here and are structured by `evigate cases backfill` (idempotent), which needs the
sessions' stored evidence and the category catalog, neither of which a schema migration should read.

Revision ID: v014
Revises: v013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evigate.storage.types import Json

revision = "v014"
down_revision = "v013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("case_library") as batch:
        batch.add_column(sa.Column("error_code", sa.String(191), nullable=True))
        batch.add_column(sa.Column("services", Json, nullable=True))
        batch.add_column(sa.Column("alert_names", Json, nullable=True))
    op.create_index("ix_case_library_fault_category", "case_library", ["fault_category", "created_at"])
    op.create_index("ix_case_library_error_code", "case_library", ["error_code"])


def downgrade() -> None:
    op.drop_index("ix_case_library_error_code", table_name="case_library")
    op.drop_index("ix_case_library_fault_category", table_name="case_library")
    with op.batch_alter_table("case_library") as batch:
        batch.drop_column("alert_names")
        batch.drop_column("services")
        batch.drop_column("error_code")
