"""Web app: hashed sign-in tokens (one-time links, browser sessions) and each session's last turn receipt.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-22 04:05:12.454251
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('web_tokens',
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('api_key_id', sa.Uuid(), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.CheckConstraint("kind IN ('login', 'session')", name=op.f('ck_web_tokens_kind_known')),
    sa.ForeignKeyConstraint(['api_key_id'], ['api_keys.id'], name=op.f('fk_web_tokens_api_key_id_api_keys'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_web_tokens_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_web_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_web_tokens_token_hash'))
    )
    with op.batch_alter_table('web_tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_web_tokens_user_id'), ['user_id'], unique=False)

    op.create_table('turn_receipts',
    sa.Column('session_id', sa.Uuid(), nullable=False),
    sa.Column('receipt', sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['session_id'], ['chat_sessions.id'], name=op.f('fk_turn_receipts_session_id_chat_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('session_id', name=op.f('pk_turn_receipts'))
    )


def downgrade() -> None:
    op.drop_table('turn_receipts')
    with op.batch_alter_table('web_tokens', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_tokens_user_id'))

    op.drop_table('web_tokens')
