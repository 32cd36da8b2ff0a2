"""Migration 0026pg on PostgreSQL: with `btree_gin` the messages' full-text index leads with the chat
(and the index on the terms alone is gone); a role that may not create the extension still migrates,
keeping the plain index, and recall still finds the person's matches (issue 53)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from orrery.db.engine import Database
from orrery.db.migrations import downgrade_async, upgrade_async
from orrery.memory.messages import append_message
from orrery.memory.recall.queries import Scope, matches
from orrery.repo.chat import NewMessage, create_session
from orrery.repo.identity import create_user
from tests.conftest import DIALECTS, settings_for
from tests.support.postgres import ThrowawayPostgres

pytestmark = pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only")
INDEXES = "SELECT indexname FROM pg_indexes WHERE tablename = 'messages' AND indexname LIKE '%search%'"


async def _indexes(db: Database) -> set[str]:
    async with db.engine.connect() as conn:
        return set((await conn.execute(text(INDEXES))).scalars())


async def _recalled(db: Database) -> list[str]:
    """What recall's full-text step finds for a person with one earlier chat about the harbour."""
    async with db.transaction() as s:
        user = await create_user(s, f"ann-{uuid.uuid4().hex[:6]}@example.org", "Ann")
        earlier = await create_session(s, user.id)
        for content in ("The ferry leaves the harbour at nine.", "Bring the tomatoes."):
            await append_message(s, user.id, earlier.id, NewMessage("user", content))
        current = await create_session(s, user.id)
    async with db.transaction() as s:
        rows = await matches(s, Scope(user.id, current.id, None), ["harbour"], [], 5, 0)
    return [row[9] for row in rows]  # the chat's seven columns, then seq, role, content


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
async def test_with_btree_gin_the_index_leads_with_the_chat(db: Database, db_url: str) -> None:
    assert await _indexes(db) == {"ix_messages_session_search"}
    assert await _recalled(db) == ["The ferry leaves the harbour at nine."]
    await downgrade_async(db_url, "0023sm")
    assert await _indexes(db) == {"ix_messages_search_vector"}
    await upgrade_async(db_url)
    assert await _indexes(db) == {"ix_messages_session_search"}


async def test_a_role_that_may_not_create_the_extension_still_migrates(pg_server: ThrowawayPostgres) -> None:
    name = f"t_{uuid.uuid4().hex[:12]}"
    role = f"r_{uuid.uuid4().hex[:8]}"
    await pg_server.execute(f"CREATE ROLE {role} LOGIN")
    await pg_server.execute(f"CREATE DATABASE {name} OWNER {role}")
    await pg_server.execute(f"REVOKE CREATE ON DATABASE {name} FROM {role}, PUBLIC")  # no extensions
    url = pg_server.url(name).replace(f"//{pg_server.user}@", f"//{role}@")
    await upgrade_async(url)
    db = Database.from_settings(settings_for(url))
    try:
        assert await _indexes(db) == {"ix_messages_search_vector"}
        assert await _recalled(db) == ["The ferry leaves the harbour at nine."]
    finally:
        await db.dispose()
