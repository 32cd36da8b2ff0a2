"""A graph version per entity, bumped in the same transaction as every edge or entity write that
changes what its linked context shows, so caches in other processes notice on their next read.

Revision ID: 0006gc
Revises: 0007
Create Date: 2026-11-22 04:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006gc"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("entities", schema=None) as batch_op:
        batch_op.add_column(sa.Column("graph_version", sa.Integer(), server_default="0", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("entities", schema=None) as batch_op:
        batch_op.drop_column("graph_version")
