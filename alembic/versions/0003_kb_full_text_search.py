"""Knowledge-base full-text search: FTS5 on SQLite, a weighted tsvector with GIN on PostgreSQL.

SQLite: `kb_entries_fts` is an external-content FTS5 table over `kb_entries` (by rowid), kept in sync
by three triggers. A later batch migration that rebuilds `kb_entries` must recreate the triggers and
run `INSERT INTO kb_entries_fts(kb_entries_fts) VALUES ('rebuild')`.

PostgreSQL: `kb_entries.search_vector` is a stored generated column (code and name weigh A,
description B, data C) with a GIN index, so it is always current.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_UP = [
    """CREATE VIRTUAL TABLE kb_entries_fts USING fts5(
        code, name, description, data, content='kb_entries', content_rowid='rowid',
        tokenize='porter unicode61')""",
    """CREATE TRIGGER kb_entries_fts_ai AFTER INSERT ON kb_entries BEGIN
        INSERT INTO kb_entries_fts(rowid, code, name, description, data)
        VALUES (new.rowid, new.code, new.name, new.description, new.data);
    END""",
    """CREATE TRIGGER kb_entries_fts_ad AFTER DELETE ON kb_entries BEGIN
        INSERT INTO kb_entries_fts(kb_entries_fts, rowid, code, name, description, data)
        VALUES ('delete', old.rowid, old.code, old.name, old.description, old.data);
    END""",
    """CREATE TRIGGER kb_entries_fts_au AFTER UPDATE ON kb_entries BEGIN
        INSERT INTO kb_entries_fts(kb_entries_fts, rowid, code, name, description, data)
        VALUES ('delete', old.rowid, old.code, old.name, old.description, old.data);
        INSERT INTO kb_entries_fts(rowid, code, name, description, data)
        VALUES (new.rowid, new.code, new.name, new.description, new.data);
    END""",
    "INSERT INTO kb_entries_fts(kb_entries_fts) VALUES ('rebuild')",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS kb_entries_fts_au",
    "DROP TRIGGER IF EXISTS kb_entries_fts_ad",
    "DROP TRIGGER IF EXISTS kb_entries_fts_ai",
    "DROP TABLE IF EXISTS kb_entries_fts",
]
POSTGRES_UP = [
    """ALTER TABLE kb_entries ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', coalesce(code, '') || ' ' || coalesce(name, '')), 'A')
        || setweight(to_tsvector('english', coalesce(description, '')), 'B')
        || setweight(to_tsvector('english', coalesce(data::text, '')), 'C')
    ) STORED""",
    "CREATE INDEX ix_kb_entries_search_vector ON kb_entries USING gin (search_vector)",
]
POSTGRES_DOWN = [
    "DROP INDEX IF EXISTS ix_kb_entries_search_vector",
    "ALTER TABLE kb_entries DROP COLUMN IF EXISTS search_vector",
]


def _run(statements: list[str]) -> None:
    for statement in statements:
        op.execute(statement)


def upgrade() -> None:
    _run(SQLITE_UP if op.get_bind().dialect.name == "sqlite" else POSTGRES_UP)


def downgrade() -> None:
    _run(SQLITE_DOWN if op.get_bind().dialect.name == "sqlite" else POSTGRES_DOWN)
