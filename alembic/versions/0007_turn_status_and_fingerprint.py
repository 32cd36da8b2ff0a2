"""Turn outcomes on messages (failed / truncated) and the fingerprint of an idempotent request.

Revision ID: 0007
Revises: 0009
Create Date: 2026-11-22 04:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("request_fingerprint", sa.String(length=64), nullable=True))
        batch_op.add_column(
            sa.Column("status", sa.String(length=16), server_default="complete", nullable=False)
        )
        batch_op.create_check_constraint(
            "status_known", "status IN ('complete', 'failed', 'truncated')"
        )


def downgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_constraint("status_known", type_="check")
        batch_op.drop_column("status")
        batch_op.drop_column("request_fingerprint")
