"""Document index: chunked user stories, endpoints, DB models and schemas per project.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 00:24:59.944692
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('doc_chunks',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('title', sa.String(length=300), nullable=False),
    sa.Column('epic', sa.String(length=200), nullable=True),
    sa.Column('content', sa.Text(), nullable=False),
    sa.Column('data', sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
    sa.Column('keywords', sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
    sa.Column('links', sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
    sa.Column('source_path', sa.Text(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.CheckConstraint("kind IN ('story', 'endpoint', 'model', 'schema')", name=op.f('ck_doc_chunks_kind_known')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_doc_chunks_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_doc_chunks')),
    sa.UniqueConstraint('project_id', 'kind', 'key', name='uq_doc_chunks_project_kind_key')
    )
    with op.batch_alter_table('doc_chunks', schema=None) as batch_op:
        batch_op.create_index('ix_doc_chunks_project_epic', ['project_id', 'epic'], unique=False)

    op.create_table('doc_indexes',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('root', sa.Text(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('counts', sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
    sa.Column('indexed_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_doc_indexes_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('project_id', name=op.f('pk_doc_indexes'))
    )


def downgrade() -> None:
    op.drop_table('doc_indexes')
    with op.batch_alter_table('doc_chunks', schema=None) as batch_op:
        batch_op.drop_index('ix_doc_chunks_project_epic')

    op.drop_table('doc_chunks')
