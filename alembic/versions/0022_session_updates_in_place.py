"""Sessions are listed by user through `ix_chat_sessions_user` (user_id), no longer by (user_id,
updated_at), so PostgreSQL can update a session's row in place: a HOT update.

Every stored message bumps its session's `message_count` and `updated_at` (twice a turn). While
`updated_at` was indexed, each bump was a non-HOT update: a new row version anywhere in the table plus
a new entry in each of its three indexes, and the versions a turn left behind stayed in the indexes
until a vacuum, so reading a session by id walked past all of them (a session read 100-600 buffers
after a few hundred turns between vacuums, where it reads 2-3 now). Without an index on a changed
column, the new version goes on the same page, no index changes, and later reads prune the old
versions. The table also leaves 30% of each page free (`fillfactor` 70), so the new version fits
beside the old one. Listing a person's sessions by recency now sorts that person's sessions (one
index range) instead of reading them in index order; no turn lists them.

SQLite has neither HOT nor fillfactor; the narrower index spares it an index write per message too.

Revision ID: 0022su
Revises: 0021rs
Create Date: 2026-11-30 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0022su"
down_revision: str | None = "0021rs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FILLFACTOR = 70


def upgrade() -> None:
    op.create_index("ix_chat_sessions_user", "chat_sessions", ["user_id"])
    op.drop_index("ix_chat_sessions_user_updated", table_name="chat_sessions")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE chat_sessions SET (fillfactor = {FILLFACTOR})")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE chat_sessions RESET (fillfactor)")
    op.create_index("ix_chat_sessions_user_updated", "chat_sessions", ["user_id", "updated_at"])
    op.drop_index("ix_chat_sessions_user", table_name="chat_sessions")
