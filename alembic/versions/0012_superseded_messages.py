"""Edit-and-resend keeps the edited user message and its reply, marked superseded: stored for the
record, never shown in a chat nor read into a model's context again.

The history epoch's update trigger (migration 0010he) watches the new column too, so a process's
cached window of the session's history is re-read after an edit. The column is added in place (no
table rebuild on SQLite, so the FTS and epoch triggers on `messages` stay).

Revision ID: 0012sm
Revises: 0011em
Create Date: 2026-11-25 03:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0012sm"
down_revision: str | None = "0011em"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WATCHED = (
    "session_id, seq, role, content, agent_id, tool_calls, created_at, token_counts, search_terms, embedding"
)
"""The columns migration 0010he's trigger watches (a cached history holds them)."""


def _recreate_trigger(columns: str) -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS messages_epoch_au")
        op.execute(
            f"""CREATE TRIGGER messages_epoch_au AFTER UPDATE OF {columns} ON messages BEGIN
            UPDATE chat_sessions SET history_epoch = history_epoch + 1
            WHERE id IN (old.session_id, new.session_id);
        END"""
        )
    else:
        op.execute("DROP TRIGGER IF EXISTS messages_epoch_au ON messages")
        op.execute(
            f"""CREATE TRIGGER messages_epoch_au AFTER UPDATE OF {columns} ON messages
            FOR EACH ROW EXECUTE FUNCTION messages_bump_history_epoch()"""
        )


def upgrade() -> None:
    op.add_column("messages", sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=True))
    _recreate_trigger(f"{WATCHED}, superseded_at")


def downgrade() -> None:
    _recreate_trigger(WATCHED)
    op.drop_column("messages", "superseded_at")
