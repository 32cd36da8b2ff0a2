"""Migration 0019am adds `messages.model` in place: a reply stored before it keeps its row (model
null), one stored after names its model, the history epoch's update trigger still fires, and it
downgrades and upgrades again on both dialects."""

from __future__ import annotations

import uuid

from sqlalchemy import inspect, select, text

from orrery.db.engine import Database
from orrery.db.migrations import downgrade_async, upgrade_async
from orrery.db.models import ChatSession, Message
from tests.conftest import settings_for


def _id(database: Database, value: uuid.UUID) -> str:
    return value.hex if database.dialect == "sqlite" else str(value)


async def _columns(database: Database) -> set[str]:
    async with database.engine.connect() as conn:
        return await conn.run_sync(lambda sync: {c["name"] for c in inspect(sync).get_columns("messages")})


async def _insert_message(database: Database, ids: dict[str, str], seq: int, model: str | None) -> None:
    column, value = (", model", ", :model") if model else ("", "")
    async with database.transaction() as s:
        await s.execute(
            text(
                f"INSERT INTO messages (id, session_id, seq, role, content, created_at{column}) "
                f"VALUES (:m, :c, :seq, 'assistant', 'A reply.', CURRENT_TIMESTAMP{value})"
            ),
            {**ids, "m": _id(database, uuid.uuid4()), "seq": seq, "model": model},
        )


async def test_model_column_upgrades_and_downgrades(empty_db_url: str) -> None:
    await upgrade_async(empty_db_url, "0018hx")
    database = Database.from_settings(settings_for(empty_db_url))
    ids = {"u": _id(database, uuid.uuid4()), "c": _id(database, uuid.uuid4())}
    try:
        assert "model" not in await _columns(database)
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
                    "VALUES (:c, :u, 0, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                ids,
            )
        await _insert_message(database, ids, 1, None)
        await upgrade_async(empty_db_url, "0019am")
        await _insert_message(database, ids, 2, "openai/gpt-4o-mini")
        async with database.transaction() as s:
            before = (await s.execute(select(ChatSession.history_epoch))).scalar_one()
            await s.execute(text("UPDATE messages SET content = 'Edited.' WHERE seq = 1"))
        async with database.sessions() as s:
            rows = (await s.execute(select(Message.seq, Message.model).order_by(Message.seq))).all()
            epoch = (await s.execute(select(ChatSession.history_epoch))).scalar_one()
        assert [tuple(r) for r in rows] == [(1, None), (2, "openai/gpt-4o-mini")]
        assert epoch == before + 1  # the epoch's update trigger survived the column's addition
        await downgrade_async(empty_db_url, "0018hx")
        assert "model" not in await _columns(database)
        await _insert_message(database, ids, 3, None)  # the table (and its triggers) still works
        await upgrade_async(empty_db_url)
        assert "model" in await _columns(database)
    finally:
        await database.dispose()
