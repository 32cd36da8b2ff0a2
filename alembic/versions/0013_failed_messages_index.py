"""A partial index of the user messages whose turn failed: every turn asks whether its session has
one (in the query that reads the session), and only a session with one reads their texts. The index
holds only `failed` rows, so the question costs one index probe however long the session is.

Revision ID: 0013fm
Revises: 0012sm
Create Date: 2026-11-25 09:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0013fm"
down_revision: str | None = "0012sm"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHERE = "status = 'failed'"


def upgrade() -> None:
    op.create_index(
        "ix_messages_failed",
        "messages",
        ["session_id"],
        sqlite_where=sa.text(WHERE),
        postgresql_where=sa.text(WHERE),
    )


def downgrade() -> None:
    op.drop_index("ix_messages_failed", table_name="messages")
