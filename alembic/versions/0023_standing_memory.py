"""Standing instructions and preferences are facts of their own kind, held in a project or in all;
each chat gets a short dated digest for the "Earlier chats" timeline (issue 49).

`facts.kind` is `fact`, `instruction` or `preference`; `facts.project_id` the project a standing
instruction holds in (null: every project, as every plain fact). `chat_digests` holds one digest per
chat, deleted with it, with the chat's message count and history epoch it was built at (so a digest
older than its chat is known stale).

On SQLite the facts table is copied to add its foreign key and check (it has no triggers to lose).

Revision ID: 0023sm
Revises: 0022su
Create Date: 2026-11-29 02:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0023sm"
down_revision: str | None = "0022su"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("facts") as batch:
        batch.add_column(sa.Column("kind", sa.String(16), nullable=False, server_default="fact"))
        batch.add_column(sa.Column("project_id", sa.Uuid(), nullable=True))
        batch.create_foreign_key(
            "fk_facts_project_id_projects", "projects", ["project_id"], ["id"], ondelete="CASCADE"
        )
        batch.create_check_constraint("fact_kind_known", "kind IN ('fact', 'instruction', 'preference')")
    op.create_table(
        "chat_digests",
        sa.Column(
            "chat_id",
            sa.Uuid(),
            sa.ForeignKey("chat_sessions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("user_id", sa.Uuid(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("model", sa.String(200), nullable=True),
        sa.Column("cost_usd", sa.Double(), nullable=True),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("history_epoch", sa.Integer(), nullable=False),
        sa.Column("first_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_chat_digests_user", "chat_digests", ["user_id", "last_at"])


def downgrade() -> None:
    op.drop_index("ix_chat_digests_user", table_name="chat_digests")
    op.drop_table("chat_digests")
    with op.batch_alter_table("facts") as batch:
        batch.drop_constraint("fact_kind_known", type_="check")
        batch.drop_constraint("fk_facts_project_id_projects", type_="foreignkey")
        batch.drop_column("project_id")
        batch.drop_column("kind")
