"""PostgreSQL: `messages.chat_terms`, each search term keyed by its chat, so a chat's full-text
lookups read only that chat's matches.

0026pg's `(session_id, search_vector)` GIN index intersects, inside the index, the chat's posting
list (every message of the chat) with each term's (every user's messages holding it): cheaper than
the heap, but still growing with the chat's length and with everyone else's data (issue 53). Here
each term is written as `<chat key><term>` (the key: the first 12 hex digits of the chat's id) in
a stored generated column with a GIN index of its own, so a lookup of `<key>garden` reads exactly
the chat's messages holding "garden", on any server, without an extension. Two chats whose keys
collide (48 random bits) only read each other's postings: every query still filters by chat.
`orrery.memory.archive_search.chat_query` writes the matching query. SQLite needs nothing:
FTS5 ranks inside its index (`recall_fts` prefixes terms with their owner: 0020rf).

The column is derived by the database from `search_terms` and `session_id` on every write, so
forgetting (which clears `search_terms`) clears it in the same statement.

Both GIN indexes on messages are written through (`fastupdate = off`). With PostgreSQL's default,
new rows wait in an unsorted pending list (up to 4 MB) until a vacuum merges them, and every search
reads the whole list: everyone's recent messages, on every turn. Writing through costs each insert
a little more and makes a lookup read only its own postings.

Revision ID: 0027ct
Revises: 0026pg
Create Date: 2026-11-29 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0027ct"
down_revision: str | None = "0026pg"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY_DIGITS = 12
"""Hex digits of the chat's id in front of each term (`orrery.memory.archive_search.chat_key`)."""
UP = [
    rf"""ALTER TABLE messages ADD COLUMN chat_terms tsvector GENERATED ALWAYS AS (
        to_tsvector('simple', regexp_replace(coalesce(search_terms, ''), '(\S+)',
        left(replace(session_id::text, '-', ''), {KEY_DIGITS}) || '\1', 'g'))) STORED""",
    "CREATE INDEX ix_messages_chat_terms ON messages USING gin (chat_terms) WITH (fastupdate = off)",
    # 0026pg's index, where it exists: its pending list too was read by every search
    "ALTER INDEX IF EXISTS ix_messages_session_search SET (fastupdate = off)",
]
DOWN = [
    "ALTER INDEX IF EXISTS ix_messages_session_search RESET (fastupdate)",
    "DROP INDEX IF EXISTS ix_messages_chat_terms",
    "ALTER TABLE messages DROP COLUMN IF EXISTS chat_terms",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in UP:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in DOWN:
            op.execute(statement)
