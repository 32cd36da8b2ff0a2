"""Session summaries: the running summary kept by the `summary` scoping strategy.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 23:45:35.368364
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('session_summaries',
    sa.Column('session_id', sa.Uuid(), nullable=False),
    sa.Column('summary', sa.Text(), nullable=False),
    sa.Column('covered_through_seq', sa.Integer(), nullable=False),
    sa.Column('token_count', sa.Integer(), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('covered_through_seq >= 0', name=op.f('ck_session_summaries_covered_non_negative')),
    sa.ForeignKeyConstraint(['session_id'], ['chat_sessions.id'], name=op.f('fk_session_summaries_session_id_chat_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('session_id', name=op.f('pk_session_summaries'))
    )


def downgrade() -> None:
    op.drop_table('session_summaries')
