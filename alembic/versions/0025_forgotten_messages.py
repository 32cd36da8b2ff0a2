"""`messages.forgotten_at`: a message that said or quoted a forgotten fact (issue 51).

Such a message stays in its own chat (its transcript and that chat's own prompt) but is never read
across chats again: recall, `search_memory`, digests and the pattern analyst skip it. The statement
that sets it also clears the message's search terms and vector (so no index holds it), and those
columns are watched by the history-epoch trigger (migration 0010he): every worker's cached copy of
the chat is stale from its next turn.

Revision ID: 0025fg
Revises: 0023sm
Create Date: 2026-11-29 06:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025fg"
down_revision: str | None = "0024ct"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("forgotten_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("messages", "forgotten_at")
