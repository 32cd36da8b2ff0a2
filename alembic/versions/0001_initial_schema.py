"""Initial schema: identity, ontology graph, knowledge base, memory and chat.

Revision ID: 0001
Revises: 
Create Date: 2026-11-21 23:32:01.328911
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON_TYPE = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('users',
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('display_name', sa.String(length=200), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("length(email) >= 3 AND email LIKE '%@%'", name=op.f('ck_users_email_format')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('email', name=op.f('uq_users_email'))
    )
    op.create_table('api_keys',
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('prefix', sa.String(length=16), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_api_keys_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_keys')),
    sa.UniqueConstraint('key_hash', name=op.f('uq_api_keys_key_hash'))
    )
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_keys_user_id'), ['user_id'], unique=False)

    op.create_table('projects',
    sa.Column('owner_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('length(name) > 0', name=op.f('ck_projects_name_not_empty')),
    sa.ForeignKeyConstraint(['owner_id'], ['users.id'], name=op.f('fk_projects_owner_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_projects'))
    )
    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_projects_owner_id'), ['owner_id'], unique=False)

    op.create_table('user_profiles',
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('preferred_name', sa.String(length=200), nullable=True),
    sa.Column('timezone', sa.String(length=64), nullable=False),
    sa.Column('bio', sa.Text(), nullable=True),
    sa.Column('preferences', JSON_TYPE, nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_user_profiles_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', name=op.f('pk_user_profiles'))
    )
    op.create_table('user_summaries',
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('patterns', JSON_TYPE, nullable=False),
    sa.Column('wins', JSON_TYPE, nullable=False),
    sa.Column('struggles', JSON_TYPE, nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_user_summaries_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', name=op.f('pk_user_summaries'))
    )
    op.create_table('chat_sessions',
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('project_id', sa.Uuid(), nullable=True),
    sa.Column('title', sa.String(length=300), nullable=True),
    sa.Column('focus_kind', sa.String(length=16), nullable=True),
    sa.Column('focus_id', sa.Uuid(), nullable=True),
    sa.Column('active_agent', sa.String(length=64), nullable=True),
    sa.Column('scoping_strategy', sa.String(length=64), nullable=True),
    sa.Column('message_count', sa.Integer(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("focus_kind IS NULL OR focus_kind IN ('project', 'task', 'plan', 'goal', 'milestone', 'document', 'output')", name=op.f('ck_chat_sessions_focus_kind_known')),
    sa.CheckConstraint('(focus_kind IS NULL) = (focus_id IS NULL)', name=op.f('ck_chat_sessions_focus_complete')),
    sa.CheckConstraint('focus_kind IS NULL OR project_id IS NOT NULL', name=op.f('ck_chat_sessions_focus_needs_project')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_chat_sessions_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_chat_sessions_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_chat_sessions'))
    )
    with op.batch_alter_table('chat_sessions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_chat_sessions_project_id'), ['project_id'], unique=False)
        batch_op.create_index('ix_chat_sessions_user_updated', ['user_id', 'updated_at'], unique=False)

    op.create_table('entities',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('name', sa.String(length=300), nullable=False),
    sa.Column('state', sa.String(length=32), nullable=False),
    sa.Column('type_key', sa.String(length=100), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('props', JSON_TYPE, nullable=False),
    sa.Column('due_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('goal_type', sa.String(length=16), nullable=True),
    sa.Column('is_scratch', sa.Boolean(), nullable=False),
    sa.Column('is_context_document', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("NOT is_context_document OR kind = 'document'", name=op.f('ck_entities_context_doc_is_document')),
    sa.CheckConstraint("NOT is_scratch OR kind = 'document'", name=op.f('ck_entities_scratch_only_documents')),
    sa.CheckConstraint("goal_type IS NULL OR (kind = 'goal' AND goal_type IN ('habit', 'target', 'project'))", name=op.f('ck_entities_goal_type_only_for_goals')),
    sa.CheckConstraint("kind IN ('task', 'plan', 'goal', 'milestone', 'document', 'output')", name=op.f('ck_entities_kind_known')),
    sa.CheckConstraint('length(name) > 0', name=op.f('ck_entities_name_not_empty')),
    sa.CheckConstraint('length(state) > 0', name=op.f('ck_entities_state_not_empty')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_entities_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_entities'))
    )
    with op.batch_alter_table('entities', schema=None) as batch_op:
        batch_op.create_index('ix_entities_project_kind_state', ['project_id', 'kind', 'state'], unique=False)
        batch_op.create_index('ix_entities_project_updated', ['project_id', 'updated_at'], unique=False)
        batch_op.create_index('uq_entities_one_context_document', ['project_id'], unique=True, sqlite_where=sa.text('is_context_document = 1'), postgresql_where=sa.text('is_context_document'))

    op.create_table('kb_collections',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('slug', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('priority', sa.Integer(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('length(slug) > 0', name=op.f('ck_kb_collections_slug_not_empty')),
    sa.CheckConstraint('priority >= 0', name=op.f('ck_kb_collections_priority_non_negative')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_kb_collections_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_kb_collections')),
    sa.UniqueConstraint('project_id', 'slug', name='uq_kb_collections_project_slug')
    )
    op.create_table('project_members',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("role IN ('owner', 'editor', 'viewer')", name=op.f('ck_project_members_role_known')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_project_members_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_project_members_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('project_id', 'user_id', name=op.f('pk_project_members'))
    )
    with op.batch_alter_table('project_members', schema=None) as batch_op:
        batch_op.create_index('ix_project_members_user_id', ['user_id'], unique=False)

    op.create_table('check_ins',
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('project_id', sa.Uuid(), nullable=True),
    sa.Column('goal_id', sa.Uuid(), nullable=True),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('mood', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.CheckConstraint('mood IS NULL OR (mood BETWEEN 1 AND 5)', name=op.f('ck_check_ins_mood_range')),
    sa.ForeignKeyConstraint(['goal_id'], ['entities.id'], name=op.f('fk_check_ins_goal_id_entities'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_check_ins_project_id_projects'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_check_ins_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_check_ins'))
    )
    with op.batch_alter_table('check_ins', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_check_ins_goal_id'), ['goal_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_check_ins_project_id'), ['project_id'], unique=False)
        batch_op.create_index('ix_check_ins_user_created', ['user_id', 'created_at'], unique=False)

    op.create_table('edges',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('src_id', sa.Uuid(), nullable=False),
    sa.Column('src_kind', sa.String(length=16), nullable=False),
    sa.Column('rel', sa.String(length=32), nullable=False),
    sa.Column('dst_id', sa.Uuid(), nullable=False),
    sa.Column('dst_kind', sa.String(length=16), nullable=False),
    sa.Column('props', JSON_TYPE, nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.CheckConstraint("dst_kind IN ('task', 'plan', 'goal', 'milestone', 'document', 'output')", name=op.f('ck_edges_dst_kind_known')),
    sa.CheckConstraint("rel IN ('belongs_to_plan', 'has_task', 'supports_goal', 'requires', 'achieved_by', 'depends_on', 'targets_milestone', 'contains', 'references', 'referenced_by', 'produces', 'produced_by', 'relates_to')", name=op.f('ck_edges_rel_known')),
    sa.CheckConstraint("src_kind IN ('task', 'plan', 'goal', 'milestone', 'document', 'output')", name=op.f('ck_edges_src_kind_known')),
    sa.CheckConstraint('src_id <> dst_id', name=op.f('ck_edges_no_self_loop')),
    sa.ForeignKeyConstraint(['dst_id'], ['entities.id'], name=op.f('fk_edges_dst_id_entities'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_edges_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['src_id'], ['entities.id'], name=op.f('fk_edges_src_id_entities'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_edges')),
    sa.UniqueConstraint('src_id', 'rel', 'dst_id', name='uq_edges_src_rel_dst')
    )
    with op.batch_alter_table('edges', schema=None) as batch_op:
        batch_op.create_index('ix_edges_dst_id_rel', ['dst_id', 'rel'], unique=False)
        batch_op.create_index(batch_op.f('ix_edges_project_id'), ['project_id'], unique=False)

    op.create_table('kb_entries',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('collection_id', sa.Uuid(), nullable=False),
    sa.Column('code', sa.String(length=32), nullable=False),
    sa.Column('name', sa.String(length=300), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('data', JSON_TYPE, nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('length(code) > 0', name=op.f('ck_kb_entries_code_not_empty')),
    sa.CheckConstraint('length(name) > 0', name=op.f('ck_kb_entries_name_not_empty')),
    sa.ForeignKeyConstraint(['collection_id'], ['kb_collections.id'], name=op.f('fk_kb_entries_collection_id_kb_collections'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_kb_entries_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_kb_entries')),
    sa.UniqueConstraint('project_id', 'code', name='uq_kb_entries_project_code')
    )
    with op.batch_alter_table('kb_entries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_kb_entries_collection_id'), ['collection_id'], unique=False)

    op.create_table('messages',
    sa.Column('session_id', sa.Uuid(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('content', sa.Text(), nullable=False),
    sa.Column('agent_id', sa.String(length=64), nullable=True),
    sa.Column('tool_calls', JSON_TYPE, nullable=True),
    sa.Column('prompt_tokens', sa.Integer(), nullable=True),
    sa.Column('completion_tokens', sa.Integer(), nullable=True),
    sa.Column('token_count', sa.Integer(), nullable=True),
    sa.Column('latency_ms', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.CheckConstraint("role IN ('user', 'assistant', 'system', 'tool')", name=op.f('ck_messages_role_known')),
    sa.CheckConstraint('seq >= 1', name=op.f('ck_messages_seq_positive')),
    sa.CheckConstraint('token_count IS NULL OR token_count >= 0', name=op.f('ck_messages_tokens_non_negative')),
    sa.ForeignKeyConstraint(['session_id'], ['chat_sessions.id'], name=op.f('fk_messages_session_id_chat_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_messages')),
    sa.UniqueConstraint('session_id', 'seq', name='uq_messages_session_seq')
    )
    op.create_table('agent_transitions',
    sa.Column('session_id', sa.Uuid(), nullable=False),
    sa.Column('from_agent', sa.String(length=64), nullable=True),
    sa.Column('to_agent', sa.String(length=64), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('message_id', sa.Uuid(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.CheckConstraint('from_agent IS NULL OR from_agent <> to_agent', name=op.f('ck_agent_transitions_is_a_switch')),
    sa.ForeignKeyConstraint(['message_id'], ['messages.id'], name=op.f('fk_agent_transitions_message_id_messages'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['session_id'], ['chat_sessions.id'], name=op.f('fk_agent_transitions_session_id_chat_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_agent_transitions'))
    )
    with op.batch_alter_table('agent_transitions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_agent_transitions_message_id'), ['message_id'], unique=False)
        batch_op.create_index('ix_agent_transitions_session_created', ['session_id', 'created_at'], unique=False)

    op.create_table('kb_relations',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('src_entry_id', sa.Uuid(), nullable=False),
    sa.Column('rel_type', sa.String(length=64), nullable=False),
    sa.Column('dst_entry_id', sa.Uuid(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.CheckConstraint('length(rel_type) > 0', name=op.f('ck_kb_relations_rel_type_not_empty')),
    sa.CheckConstraint('src_entry_id <> dst_entry_id', name=op.f('ck_kb_relations_no_self_loop')),
    sa.ForeignKeyConstraint(['dst_entry_id'], ['kb_entries.id'], name=op.f('fk_kb_relations_dst_entry_id_kb_entries'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_kb_relations_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['src_entry_id'], ['kb_entries.id'], name=op.f('fk_kb_relations_src_entry_id_kb_entries'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_kb_relations')),
    sa.UniqueConstraint('src_entry_id', 'rel_type', 'dst_entry_id', name='uq_kb_relations_src_type_dst')
    )
    with op.batch_alter_table('kb_relations', schema=None) as batch_op:
        batch_op.create_index('ix_kb_relations_dst_entry_id', ['dst_entry_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('kb_relations', schema=None) as batch_op:
        batch_op.drop_index('ix_kb_relations_dst_entry_id')

    op.drop_table('kb_relations')
    with op.batch_alter_table('agent_transitions', schema=None) as batch_op:
        batch_op.drop_index('ix_agent_transitions_session_created')
        batch_op.drop_index(batch_op.f('ix_agent_transitions_message_id'))

    op.drop_table('agent_transitions')
    op.drop_table('messages')
    with op.batch_alter_table('kb_entries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_kb_entries_collection_id'))

    op.drop_table('kb_entries')
    with op.batch_alter_table('edges', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_edges_project_id'))
        batch_op.drop_index('ix_edges_dst_id_rel')

    op.drop_table('edges')
    with op.batch_alter_table('check_ins', schema=None) as batch_op:
        batch_op.drop_index('ix_check_ins_user_created')
        batch_op.drop_index(batch_op.f('ix_check_ins_project_id'))
        batch_op.drop_index(batch_op.f('ix_check_ins_goal_id'))

    op.drop_table('check_ins')
    with op.batch_alter_table('project_members', schema=None) as batch_op:
        batch_op.drop_index('ix_project_members_user_id')

    op.drop_table('project_members')
    op.drop_table('kb_collections')
    with op.batch_alter_table('entities', schema=None) as batch_op:
        batch_op.drop_index('uq_entities_one_context_document', sqlite_where=sa.text('is_context_document = 1'), postgresql_where=sa.text('is_context_document'))
        batch_op.drop_index('ix_entities_project_updated')
        batch_op.drop_index('ix_entities_project_kind_state')

    op.drop_table('entities')
    with op.batch_alter_table('chat_sessions', schema=None) as batch_op:
        batch_op.drop_index('ix_chat_sessions_user_updated')
        batch_op.drop_index(batch_op.f('ix_chat_sessions_project_id'))

    op.drop_table('chat_sessions')
    op.drop_table('user_summaries')
    op.drop_table('user_profiles')
    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_projects_owner_id'))

    op.drop_table('projects')
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_keys_user_id'))

    op.drop_table('api_keys')
    op.drop_table('users')
