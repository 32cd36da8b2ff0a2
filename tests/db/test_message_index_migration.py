"""Migration 0004cq gives messages written before it their token counts and search terms."""

from __future__ import annotations

import uuid

from sqlalchemy import text

from orrery.db.engine import Database
from orrery.db.migrations import downgrade_async, upgrade_async
from orrery.memory.history import DbHistory
from orrery.memory.message_index import written_encodings
from orrery.tokens import TokenCounter
from tests.conftest import settings_for


async def test_existing_messages_are_backfilled_and_searchable(empty_db_url: str) -> None:
    await upgrade_async(empty_db_url, "0006")
    database = Database.from_settings(settings_for(empty_db_url))
    user, chat = uuid.uuid4(), uuid.uuid4()
    ids = {
        "u": user.hex if database.dialect == "sqlite" else str(user),
        "c": chat.hex if database.dialect == "sqlite" else str(chat),
    }
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
                    "VALUES (:c, :u, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                ids,
            )
            await s.execute(
                text(
                    "INSERT INTO messages (id, session_id, seq, role, content, created_at) VALUES "
                    "(:m, :c, 1, 'user', 'The approval processes are slow.', CURRENT_TIMESTAMP)"
                ),
                {**ids, "m": uuid.uuid4().hex if database.dialect == "sqlite" else str(uuid.uuid4())},
            )
        await upgrade_async(empty_db_url)
        async with database.sessions() as s:
            history = DbHistory(s, chat, 1)
            async with history.window(5) as window:
                assert window.messages[0].token_counts == {  # the configured models' encodings
                    name: TokenCounter("test", name, True).count("The approval processes are slow.")
                    for name in written_encodings()
                }
            assert await history.search(["process"], 5) == [1]
        await downgrade_async(empty_db_url, "0006")
        await upgrade_async(empty_db_url)
    finally:
        await database.dispose()
