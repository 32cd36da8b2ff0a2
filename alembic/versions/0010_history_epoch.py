"""A history epoch per session, bumped by the database whenever a stored message is deleted or one
of the fields scoping reads is changed, so a process's cached copy of a session's history (see
`backend/orrery/memory/history_cache.py`) knows, on its next read, that it must read the session again.
Appending a message does not bump it: a cache reads the new messages on top of what it holds.

Triggers keep it (a writer that bypasses the application is noticed too). A later migration that
rebuilds `messages` on SQLite (batch mode) must recreate them, as it must the FTS triggers.

Revision ID: 0010he
Revises: 0006gc
Create Date: 2026-11-22 11:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010he"
down_revision: str | None = "0006gc"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WATCHED = "session_id, seq, role, content, agent_id, tool_calls, created_at, token_counts, search_terms, embedding"
"""The columns a cached history holds; a change to `status` and the usage columns is not watched."""

SQLITE_UP = [
    """CREATE TRIGGER messages_epoch_ad AFTER DELETE ON messages BEGIN
        UPDATE chat_sessions SET history_epoch = history_epoch + 1 WHERE id = old.session_id;
    END""",
    f"""CREATE TRIGGER messages_epoch_au AFTER UPDATE OF {WATCHED} ON messages BEGIN
        UPDATE chat_sessions SET history_epoch = history_epoch + 1
        WHERE id IN (old.session_id, new.session_id);
    END""",
]
SQLITE_DOWN = ["DROP TRIGGER IF EXISTS messages_epoch_au", "DROP TRIGGER IF EXISTS messages_epoch_ad"]
POSTGRES_UP = [
    """CREATE FUNCTION messages_bump_history_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE chat_sessions SET history_epoch = history_epoch + 1
        WHERE id = OLD.session_id OR (TG_OP = 'UPDATE' AND id = NEW.session_id);
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER messages_epoch_ad AFTER DELETE ON messages
        FOR EACH ROW EXECUTE FUNCTION messages_bump_history_epoch()""",
    f"""CREATE TRIGGER messages_epoch_au AFTER UPDATE OF {WATCHED} ON messages
        FOR EACH ROW EXECUTE FUNCTION messages_bump_history_epoch()""",
]
POSTGRES_DOWN = [
    "DROP TRIGGER IF EXISTS messages_epoch_au ON messages",
    "DROP TRIGGER IF EXISTS messages_epoch_ad ON messages",
    "DROP FUNCTION IF EXISTS messages_bump_history_epoch()",
]


def upgrade() -> None:
    op.add_column("chat_sessions", sa.Column("history_epoch", sa.Integer(), server_default="0", nullable=False))
    for statement in SQLITE_UP if op.get_bind().dialect.name == "sqlite" else POSTGRES_UP:
        op.execute(statement)


def downgrade() -> None:
    for statement in SQLITE_DOWN if op.get_bind().dialect.name == "sqlite" else POSTGRES_DOWN:
        op.execute(statement)
    with op.batch_alter_table("chat_sessions", schema=None) as batch_op:
        batch_op.drop_column("history_epoch")
