"""PostgreSQL: a full-text index that leads with the chat, so recall reads only the person's rows.

Recall's candidate search used the global GIN index on `messages.search_vector`: its bitmap heap
scan visited every user's matching messages and filtered by person afterwards, so a person's turn
cost grew with everyone else's data (issue 53). With the `btree_gin` extension (shipped with
PostgreSQL's contrib, trusted: a database owner may create it) a GIN index can hold the chat id
beside the terms, `(session_id, search_vector)`: recall asks each of the person's recallable chats
for its best matches (a `LATERAL` per chat, `orrery.memory.recall.queries`), and each probe
intersects the chat's postings with the terms' inside the index.

Without the extension (a server without contrib, a role that may not create it) the migration
creates nothing and says so; the same query then reads each chat's messages by the
`(session_id, seq)` unique index and filters them: still only the person's rows, just more of them.
The global index on the terms alone is dropped when the composite one is made (the composite serves
a search by terms alone too, e.g. the web app's search of all a person's chats). SQLite needs
nothing (`recall_fts` already prefixes each term with its owner: 0020rf).

Revision ID: 0026pg
Revises: 0023sm
Create Date: 2026-11-29 06:00:00
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy import text

from alembic import op

revision: str = "0026pg"
down_revision: str | None = "0025fg"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_messages_session_search"
GLOBAL = "ix_messages_search_vector"
"""0004cq's index on the terms alone, dropped once the composite one exists: a GIN index answers a
condition on any of its columns, so the composite serves a search by terms alone as well, and
with the global one beside it a generic plan combined it with each chat's seq index (`BitmapAnd`),
reading every user's matches once per chat."""
log = logging.getLogger("alembic.runtime.migration")


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    savepoint = bind.begin_nested()
    try:
        bind.execute(text("CREATE EXTENSION IF NOT EXISTS btree_gin"))
    except Exception as exc:  # noqa: BLE001 - any refusal means: keep the extension-free plan
        savepoint.rollback()
        reason = str(exc).splitlines()[0]
        log.warning("btree_gin is not available (%s); recall reads each chat by its seq index", reason)
        return
    savepoint.commit()
    op.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON messages USING gin (session_id, search_vector)")
    op.execute(f"DROP INDEX IF EXISTS {GLOBAL}")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"CREATE INDEX IF NOT EXISTS {GLOBAL} ON messages USING gin (search_vector)")
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")
