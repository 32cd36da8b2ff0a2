"""Migration 0022su: sessions are indexed by user alone, so the bump every stored message gives its
session (`message_count`, `updated_at`) changes no indexed column and PostgreSQL updates the row in
place (HOT, with room left on each page); the sessions list keeps its most-recent-first order, and
the migration downgrades and upgrades again on both databases."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import inspect, text

from orrery.db.engine import Database
from orrery.db.migrations import downgrade_async, upgrade_async
from orrery.memory.messages import append_message
from orrery.repo.chat import NewMessage, create_session
from orrery.repo.identity import create_user
from orrery.repo.sessions import list_sessions
from tests.conftest import settings_for


async def _indexes(db: Database) -> dict[str, list[str]]:
    async with db.engine.connect() as conn:
        found = await conn.run_sync(lambda c: inspect(c).get_indexes("chat_sessions"))
    return {str(i["name"]): [str(c) for c in i["column_names"]] for i in found}


async def _fillfactor(db: Database) -> list[str] | None:
    async with db.sessions() as s:
        query = text("SELECT reloptions FROM pg_class WHERE relname = 'chat_sessions'")
        options: list[str] | None = (await s.execute(query)).scalar_one()
        return options


async def _person_with_chats(db: Database) -> tuple[uuid.UUID, list[uuid.UUID]]:
    async with db.transaction() as s:
        user = await create_user(s, f"ann-{uuid.uuid4().hex[:6]}@example.org", "Ann")
        chats = [(await create_session(s, user.id, title=f"chat {i}")).id for i in range(3)]
    return user.id, chats


async def _hot_updates_while_appending(db: Database, user_id: uuid.UUID, chat: uuid.UUID) -> int:
    """Messages appended in one transaction, and how many of its updates of `chat_sessions` were
    HOT (this transaction's own counter, read before it commits)."""
    async with db.transaction() as s:
        for i in range(3):
            await append_message(s, user_id, chat, NewMessage("user" if i % 2 == 0 else "assistant", f"m{i}"))
        query = text("SELECT pg_stat_get_xact_tuples_hot_updated('chat_sessions'::regclass)")
        return int((await s.execute(query)).scalar_one())


async def _listed(db: Database, user_id: uuid.UUID) -> list[Any]:
    async with db.sessions() as s:
        return [item.session.id for item in await list_sessions(s, user_id)]


async def test_a_message_updates_its_session_in_place(empty_db_url: str) -> None:
    await upgrade_async(empty_db_url)
    db = Database.from_settings(settings_for(empty_db_url))
    try:
        assert await _indexes(db) == {
            "ix_chat_sessions_project_id": ["project_id"],
            "ix_chat_sessions_user": ["user_id"],
        }
        user_id, chats = await _person_with_chats(db)
        if db.dialect == "postgresql":
            assert await _fillfactor(db) == ["fillfactor=70"]
            assert await _hot_updates_while_appending(db, user_id, chats[0]) == 3
        else:
            async with db.transaction() as s:
                await append_message(s, user_id, chats[0], NewMessage("user", "m0"))
        assert (await _listed(db, user_id))[0] == chats[0]  # the most recently active first

        await downgrade_async(empty_db_url, "0021rs")
        assert await _indexes(db) == {
            "ix_chat_sessions_project_id": ["project_id"],
            "ix_chat_sessions_user_updated": ["user_id", "updated_at"],
        }
        if db.dialect == "postgresql":
            assert await _fillfactor(db) is None
            await db.engine.dispose()  # the pooled connections' prepared statements name the old index
            assert await _hot_updates_while_appending(db, user_id, chats[1]) == 0
        await upgrade_async(empty_db_url)
        assert "ix_chat_sessions_user" in await _indexes(db)
    finally:
        await db.dispose()
