"""Provenance of knowledge-base edits, and the auto-loaded knowledge packet per chat session.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 00:17:12.149890
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('kb_entry_revisions',
    sa.Column('entry_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=True),
    sa.Column('session_id', sa.Uuid(), nullable=True),
    sa.Column('changes', sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.ForeignKeyConstraint(['entry_id'], ['kb_entries.id'], name=op.f('fk_kb_entry_revisions_entry_id_kb_entries'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['session_id'], ['chat_sessions.id'], name=op.f('fk_kb_entry_revisions_session_id_chat_sessions'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_kb_entry_revisions_user_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_kb_entry_revisions'))
    )
    with op.batch_alter_table('kb_entry_revisions', schema=None) as batch_op:
        batch_op.create_index('ix_kb_entry_revisions_entry_created', ['entry_id', 'created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_kb_entry_revisions_session_id'), ['session_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_kb_entry_revisions_user_id'), ['user_id'], unique=False)

    with op.batch_alter_table('chat_sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('knowledge_focus', sa.String(length=80), nullable=True))
        batch_op.add_column(sa.Column('knowledge_packet', sa.Text(), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('chat_sessions', schema=None) as batch_op:
        batch_op.drop_column('knowledge_packet')
        batch_op.drop_column('knowledge_focus')

    with op.batch_alter_table('kb_entry_revisions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_kb_entry_revisions_user_id'))
        batch_op.drop_index(batch_op.f('ix_kb_entry_revisions_session_id'))
        batch_op.drop_index('ix_kb_entry_revisions_entry_created')

    op.drop_table('kb_entry_revisions')
