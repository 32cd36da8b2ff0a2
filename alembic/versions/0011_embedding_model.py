"""Each stored embedding names its model and size, so relevance never compares two models' vectors
and `orrery embeddings` can say what is missing after `ORRERY_EMBEDDING_MODEL` changes.

Rows that already have a vector got it from the bundled all-MiniLM-L6-v2 (384 dimensions). The
columns are added in place (no table rebuild on SQLite, so the FTS and history-epoch triggers stay).

Revision ID: 0011em
Revises: 0010he
Create Date: 2026-11-23 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0011em"
down_revision: str | None = "0010he"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("embedding_model", sa.String(length=200), nullable=True))
    op.add_column("messages", sa.Column("embedding_dim", sa.Integer(), nullable=True))
    op.execute(
        "UPDATE messages SET embedding_model = 'all-MiniLM-L6-v2', embedding_dim = 384 "
        "WHERE embedding IS NOT NULL"
    )


def downgrade() -> None:
    op.drop_column("messages", "embedding_dim")
    op.drop_column("messages", "embedding_model")
