"""Jobs get a `dedupe_key`, unique among queued and running jobs: a person's summary refresh is
queued once however many replies (in however many sessions and processes) find their summary due.

Revision ID: 0015jd
Revises: 0014mc
Create Date: 2026-11-26 11:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0015jd"
down_revision: str | None = "0014mc"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PENDING = "status IN ('queued', 'running') AND dedupe_key IS NOT NULL"


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("dedupe_key", sa.String(200), nullable=True))
    op.create_index(
        "uq_jobs_pending_dedupe_key",
        "jobs",
        ["dedupe_key"],
        unique=True,
        sqlite_where=sa.text(PENDING),
        postgresql_where=sa.text(PENDING),
    )


def downgrade() -> None:
    op.drop_index("uq_jobs_pending_dedupe_key", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("dedupe_key")
