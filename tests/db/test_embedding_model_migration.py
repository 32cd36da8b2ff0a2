"""Migration 0011em names the model and size of the vectors stored before it (the bundled MiniLM's)."""

from __future__ import annotations

import uuid

from sqlalchemy import select, text

from orrery.db.engine import Database
from orrery.db.migrations import upgrade_async
from orrery.db.models import Message
from orrery.memory.history import DbHistory
from tests.conftest import settings_for


def _id(database: Database, value: uuid.UUID) -> str:
    return value.hex if database.dialect == "sqlite" else str(value)


async def test_existing_vectors_are_minilm(empty_db_url: str) -> None:
    await upgrade_async(empty_db_url, "0010he")
    database = Database.from_settings(settings_for(empty_db_url))
    user, chat = uuid.uuid4(), uuid.uuid4()
    ids = {"u": _id(database, user), "c": _id(database, chat)}
    try:
        async with database.transaction() as s:
            await s.execute(
                text(
                    "INSERT INTO users (id, email, display_name, created_at, updated_at) "
                    "VALUES (:u, 'old@example.org', 'Old', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                ids,
            )
            await s.execute(
                text(
                    "INSERT INTO chat_sessions (id, user_id, message_count, created_at, updated_at) "
                    "VALUES (:c, :u, 2, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                ids,
            )
            for seq, vector in ((1, bytes(768)), (2, None)):
                await s.execute(
                    text(
                        "INSERT INTO messages (id, session_id, seq, role, content, created_at, embedding) "
                        "VALUES (:m, :c, :seq, 'user', 'Old words.', CURRENT_TIMESTAMP, :v)"
                    ),
                    {**ids, "m": _id(database, uuid.uuid4()), "seq": seq, "v": vector},
                )
        await upgrade_async(empty_db_url)
        async with database.sessions() as s:
            rows = (
                await s.execute(select(Message.embedding_model, Message.embedding_dim).order_by(Message.seq))
            ).all()
            assert [tuple(r) for r in rows] == [("all-MiniLM-L6-v2", 384), (None, None)]
            async with DbHistory(s, chat, 2).window(5) as window:
                assert window.with_vectors() == [True, False]
    finally:
        await database.dispose()
