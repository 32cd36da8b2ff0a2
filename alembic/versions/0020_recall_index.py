"""SQLite: a full-text index recall can search one person at a time (`recall_fts`).

Recall's candidate query ranked every match of `messages_fts`, whoever's message it was, then joined
each to its chat to keep the person's: its cost grew with the whole server's messages, and on SQLite
it runs inside the server process. `recall_fts` is a contentless FTS5 table with two columns:
- `terms`: each of the message's search terms prefixed with its author's key (the first 12 hex
  digits of the chat owner's id), so a person's query reads only their own postings, and BM25's
  statistics are theirs; empty for a superseded or failed message, which recall never offers;
- `chat`: the chat's id, so the chats recall reads otherwise are excluded inside the index.
The ranking and its limit then run inside FTS5, and only the best few rows are joined (the query
still checks every rule in SQL: the key only narrows).

Kept in sync by triggers on `messages` (a contentless table's 'delete' needs the values indexed, so
they are computed the same way from the old row), and a trigger that deletes a chat's messages
before the chat itself, so the owner's key is still readable when they leave the index (a cascade
would run after the chat row is gone). A later migration that rebuilds `messages` in batch mode
must recreate these triggers (`SQLITE_UP[1:]`) and refill the table (`SQLITE_FILL`) after
`DELETE FROM recall_fts`. PostgreSQL needs nothing: its `tsvector` query filters by person in the
database, with the GIN index.

Revision ID: 0020rf
Revises: 0019am
Create Date: 2026-11-28 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0020rf"
down_revision: str | None = "0019am"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY_DIGITS = 12
"""Hex digits of the owner's id that prefix each term (`orrery.memory.recall.queries.owner_key`)."""


def _terms(row: str) -> str:
    """The indexed `terms` of a message row (`new` or `old`), as both triggers must agree on."""
    key = f"(SELECT substr(s.user_id, 1, {KEY_DIGITS}) FROM chat_sessions s WHERE s.id = {row}.session_id)"
    return (
        f"CASE WHEN {row}.superseded_at IS NULL AND {row}.status != 'failed' "
        f"THEN {key} || replace(coalesce({row}.search_terms, ''), ' ', ' ' || {key}) ELSE '' END"
    )


SQLITE_UP = [
    "CREATE VIRTUAL TABLE recall_fts USING fts5(terms, chat, content='', tokenize='unicode61')",
    f"""CREATE TRIGGER recall_fts_ai AFTER INSERT ON messages BEGIN
        INSERT INTO recall_fts(rowid, terms, chat) VALUES (new.rowid, {_terms("new")}, new.session_id);
    END""",
    f"""CREATE TRIGGER recall_fts_ad AFTER DELETE ON messages BEGIN
        INSERT INTO recall_fts(recall_fts, rowid, terms, chat)
        VALUES ('delete', old.rowid, {_terms("old")}, old.session_id);
    END""",
    f"""CREATE TRIGGER recall_fts_au AFTER UPDATE OF search_terms, superseded_at, status, session_id
        ON messages BEGIN
        INSERT INTO recall_fts(recall_fts, rowid, terms, chat)
        VALUES ('delete', old.rowid, {_terms("old")}, old.session_id);
        INSERT INTO recall_fts(rowid, terms, chat) VALUES (new.rowid, {_terms("new")}, new.session_id);
    END""",
    """CREATE TRIGGER recall_fts_chat_bd BEFORE DELETE ON chat_sessions BEGIN
        DELETE FROM messages WHERE session_id = old.id;
    END""",
]
SQLITE_FILL = (
    f"INSERT INTO recall_fts(rowid, terms, chat) SELECT m.rowid, {_terms('m')}, m.session_id FROM messages m"
)
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS recall_fts_chat_bd",
    "DROP TRIGGER IF EXISTS recall_fts_au",
    "DROP TRIGGER IF EXISTS recall_fts_ad",
    "DROP TRIGGER IF EXISTS recall_fts_ai",
    "DROP TABLE IF EXISTS recall_fts",
]


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in SQLITE_UP:
        op.execute(statement)
    op.execute(SQLITE_FILL)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in SQLITE_DOWN:
        op.execute(statement)
