"""Turn outcomes on messages (failed / truncated) and the fingerprint of an idempotent request.

Revision ID: 0007
Revises: 0009
Create Date: 2026-11-22 04:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


MESSAGE_INDEX = "0004cq_message_index"


def _restore_message_index() -> None:
    """Batch mode on SQLite rebuilds `messages`, which drops its FTS5 triggers and renumbers rowids:
    put the triggers back and rebuild the index from the table (PostgreSQL alters in place)."""
    if op.get_bind().dialect.name != "sqlite":
        return
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(MESSAGE_INDEX, Path(__file__).with_name(f"{MESSAGE_INDEX}.py"))
    assert spec is not None and spec.loader is not None
    index = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(index)
    for statement in index.SQLITE_DOWN[:3] + index.SQLITE_UP[1:]:  # the triggers, not the table
        op.execute(statement)
    op.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")


def upgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("request_fingerprint", sa.String(length=64), nullable=True))
        batch_op.add_column(
            sa.Column("status", sa.String(length=16), server_default="complete", nullable=False)
        )
        batch_op.create_check_constraint(
            "status_known", "status IN ('complete', 'failed', 'truncated')"
        )
    _restore_message_index()


def downgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_constraint("status_known", type_="check")
        batch_op.drop_column("status")
        batch_op.drop_column("request_fingerprint")
    _restore_message_index()
