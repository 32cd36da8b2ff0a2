"""Messages carry what scoping reads back: token counts, analyzed search terms, an embedding; and
their search terms are indexed by the database's full-text engine.

- `token_counts` (JSON): content tokens per tiktoken encoding, written once with the message.
- `search_terms` (text): the shared analyzer's stems of the content, space-separated.
- `embedding` (bytes): the local embedder's float16 vector, when the embedder is installed.

SQLite: `messages_fts` is an external-content FTS5 table over `messages.search_terms` and the
session id (a token, so a search is narrowed to one session inside the index) by rowid,
kept in sync by three triggers (a later migration that rebuilds `messages` must recreate them and
run `INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`). PostgreSQL: a stored generated
`search_vector` (the 'simple' configuration: the terms are already stemmed) with a GIN index.
Existing messages get counts and terms here (batched); embeddings are not back-filled.

Revision ID: 0004cq
Revises: 0006
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004cq"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_UP = [
    """CREATE VIRTUAL TABLE messages_fts USING fts5(
        search_terms, session_id, content='messages', content_rowid='rowid', tokenize='unicode61')""",
    """CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, search_terms, session_id)
        VALUES (new.rowid, new.search_terms, new.session_id);
    END""",
    """CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, search_terms, session_id)
        VALUES ('delete', old.rowid, old.search_terms, old.session_id);
    END""",
    """CREATE TRIGGER messages_fts_au AFTER UPDATE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, search_terms, session_id)
        VALUES ('delete', old.rowid, old.search_terms, old.session_id);
        INSERT INTO messages_fts(rowid, search_terms, session_id)
        VALUES (new.rowid, new.search_terms, new.session_id);
    END""",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS messages_fts_au",
    "DROP TRIGGER IF EXISTS messages_fts_ad",
    "DROP TRIGGER IF EXISTS messages_fts_ai",
    "DROP TABLE IF EXISTS messages_fts",
]
POSTGRES_UP = [
    """ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        to_tsvector('simple', coalesce(search_terms, ''))) STORED""",
    "CREATE INDEX ix_messages_search_vector ON messages USING gin (search_vector)",
]
POSTGRES_DOWN = [
    "DROP INDEX IF EXISTS ix_messages_search_vector",
    "ALTER TABLE messages DROP COLUMN IF EXISTS search_vector",
]
BATCH = 1000


def _backfill() -> None:
    from orrery.memory.message_index import index_fields

    bind = op.get_bind()
    messages = sa.table(
        "messages",
        sa.column("id", sa.Uuid()),
        sa.column("content", sa.Text()),
        sa.column("token_counts", sa.JSON()),
        sa.column("search_terms", sa.Text()),
    )
    while True:
        rows = bind.execute(
            sa.select(messages.c.id, messages.c.content).where(messages.c.search_terms.is_(None)).limit(BATCH)
        ).all()
        if not rows:
            return
        for row in rows:
            counts, terms = index_fields(row.content or "")
            bind.execute(
                messages.update()
                .where(messages.c.id == row.id)
                .values(token_counts=counts, search_terms=terms)
            )


def upgrade() -> None:
    op.add_column(
        "messages",
        sa.Column(
            "token_counts",
            sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql"),
            nullable=True,
        ),
    )
    op.add_column("messages", sa.Column("search_terms", sa.Text(), nullable=True))
    op.add_column("messages", sa.Column("embedding", sa.LargeBinary(), nullable=True))
    _backfill()  # before the FTS triggers exist: they must never 'delete' rows FTS5 has not indexed
    sqlite = op.get_bind().dialect.name == "sqlite"
    for statement in SQLITE_UP if sqlite else POSTGRES_UP:
        op.execute(statement)
    if sqlite:
        op.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")


def downgrade() -> None:
    for statement in SQLITE_DOWN if op.get_bind().dialect.name == "sqlite" else POSTGRES_DOWN:
        op.execute(statement)
    op.drop_column("messages", "embedding")
    op.drop_column("messages", "search_terms")
    op.drop_column("messages", "token_counts")
