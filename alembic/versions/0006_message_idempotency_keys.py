"""Idempotency keys on user messages, so a retried POST returns the original turn.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22 00:56:45.245840
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('messages', schema=None) as batch_op:
        batch_op.add_column(sa.Column('client_key', sa.String(length=200), nullable=True))
        batch_op.create_index('uq_messages_session_client_key', ['session_id', 'client_key'], unique=True, sqlite_where=sa.text('client_key IS NOT NULL'), postgresql_where=sa.text('client_key IS NOT NULL'))



def downgrade() -> None:
    with op.batch_alter_table('messages', schema=None) as batch_op:
        batch_op.drop_index('uq_messages_session_client_key', sqlite_where=sa.text('client_key IS NOT NULL'), postgresql_where=sa.text('client_key IS NOT NULL'))
        batch_op.drop_column('client_key')

