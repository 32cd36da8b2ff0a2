"""An index on the keyed jobs that failed for good, by key and time: before queueing a person's
summary refresh, `enqueue_once` asks whether the same work failed within the refresh interval.

Revision ID: 0016jf
Revises: 0015jd
Create Date: 2026-11-26 14:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0016jf"
down_revision: str | None = "0015jd"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FAILED = "status = 'failed' AND dedupe_key IS NOT NULL"


def upgrade() -> None:
    op.create_index(
        "ix_jobs_failed_dedupe_key",
        "jobs",
        ["dedupe_key", "updated_at"],
        sqlite_where=sa.text(FAILED),
        postgresql_where=sa.text(FAILED),
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_failed_dedupe_key", table_name="jobs")
