"""SQLite: a message's insert counts it in its session (a trigger), so appending a message is one
statement there too, as the data-modifying `WITH` makes it on PostgreSQL. The insert takes its `seq`
from the session's `message_count`; the trigger then moves the count (and `updated_at`) to it. A
writer that counted the message itself first (its `seq` is not above the count) changes nothing.
A later migration that rebuilds `messages` on SQLite (a batch `ALTER`) drops the trigger with the
table, and must create it again (`upgrade()` here).

Revision ID: 0014mc
Revises: 0013fm
Create Date: 2026-11-26 11:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014mc"
down_revision: str | None = "0013fm"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TRIGGER = "messages_count_in_session"


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(
        f"CREATE TRIGGER {TRIGGER} AFTER INSERT ON messages BEGIN "
        "UPDATE chat_sessions SET message_count = NEW.seq, updated_at = NEW.created_at "
        "WHERE id = NEW.session_id AND message_count < NEW.seq; END"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"DROP TRIGGER IF EXISTS {TRIGGER}")
