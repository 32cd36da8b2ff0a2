"""Memory across chats: a chat may be left out of memory (`remember`), a person chooses whether
earlier chats are recalled (and from other projects), and facts about the person are kept with
their lineage (the chat and message they came from, and the fact that replaced them).

`facts.source_session_id` has no foreign key on purpose: deleting a chat without forgetting its facts
keeps the facts and where they came from; `?forget_facts=true` deletes them by this column.
`user_summaries.source_sessions` lists the chats a learned summary drew on, so forgetting one of them
rebuilds it.

Revision ID: 0017mc
Revises: 0016jf
Create Date: 2026-11-27 10:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0017mc"
down_revision: str | None = "0016jf"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("chat_sessions", sa.Column("remember", sa.Boolean(), nullable=False, server_default=sa.true()))
    op.add_column(
        "users", sa.Column("recall_across_chats", sa.Boolean(), nullable=False, server_default=sa.true())
    )
    op.add_column(
        "users", sa.Column("recall_other_projects", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "user_summaries", sa.Column(
            "source_sessions",
            sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
            nullable=False,
            server_default="[]",
        )
    )
    op.create_table(
        "facts",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("user_id", sa.Uuid(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("subject", sa.String(200), nullable=True),
        sa.Column("source_session_id", sa.Uuid(), nullable=True),
        sa.Column("source_seq", sa.Integer(), nullable=True),
        sa.Column("valid_from", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "superseded_by", sa.Uuid(), sa.ForeignKey("facts.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("length(text) > 0", name="ck_facts_text_not_empty"),
    )
    op.create_index("ix_facts_user_current", "facts", ["user_id", "superseded_at"])
    op.create_index("ix_facts_user_source", "facts", ["user_id", "source_session_id"])


def downgrade() -> None:
    op.drop_index("ix_facts_user_source", table_name="facts")
    op.drop_index("ix_facts_user_current", table_name="facts")
    op.drop_table("facts")
    # in place (SQLite >= 3.35 drops a column without a table copy, which would break its triggers)
    op.drop_column("user_summaries", "source_sessions")
    op.drop_column("users", "recall_other_projects")
    op.drop_column("users", "recall_across_chats")
    op.drop_column("chat_sessions", "remember")
