"""Migration 0020rf indexes messages written before it for recall, one person at a time (SQLite's
`recall_fts`; PostgreSQL needs nothing), and its triggers keep the index in step with edits and
deletions; it downgrades and upgrades again on both databases. Since 0021rs the index stores no row
sizes (ranking its matches reads none), with the same contents."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import text, update

from orrery.db.engine import Database
from orrery.db.migrations import downgrade_async, upgrade_async
from orrery.db.models import Message
from orrery.memory.messages import append_message
from orrery.memory.recall.queries import Scope, matches
from orrery.repo.chat import NewMessage, create_session
from orrery.repo.identity import create_user
from orrery.repo.sessions import delete_session
from tests.conftest import settings_for

LINES = ["The sailing trip left from Kirkwall harbour.", "Kirkwall, noted.", "The ferry was late."]


async def _person_with_chat(s: Any, name: str) -> tuple[uuid.UUID, uuid.UUID]:
    user = await create_user(s, f"{name}-{uuid.uuid4().hex[:6]}@example.org", name)
    chat = await create_session(s, user.id, title=f"{name}'s trip")
    for i, line in enumerate(LINES):
        await append_message(s, user.id, chat.id, NewMessage("user" if i % 2 == 0 else "assistant", line))
    return user.id, chat.id


async def _hits(db: Database, user_id: uuid.UUID, terms: list[str]) -> list[tuple[str, int]]:
    """(chat id, seq) of each full-text match recall reads for the person, from a new chat."""
    async with db.sessions() as s:
        rows = await matches(s, Scope(user_id, uuid.uuid4(), None), terms, [], 10, 0)
    return [(str(uuid.UUID(str(r[0]))), int(r[7])) for r in rows]


async def _indexed(db: Database) -> int:
    """Messages in `recall_fts`: each has one token in its `chat` column (the table stores no row
    sizes since 0021rs, so it cannot be scanned to count them)."""
    async with db.sessions() as s:
        await s.execute(
            text(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_vocab USING fts5vocab(main, recall_fts, col)"
            )
        )
        total = (
            await s.execute(text("SELECT sum(doc) FROM temp.recall_vocab WHERE col = 'chat'"))
        ).scalar_one()
        return int(total or 0)


async def test_existing_messages_are_indexed_per_person_and_kept_in_step(empty_db_url: str) -> None:
    await upgrade_async(empty_db_url, "0019am")
    db = Database.from_settings(settings_for(empty_db_url))
    try:
        async with db.transaction() as s:
            ann, ann_chat = await _person_with_chat(s, "Ann")
            bob, _ = await _person_with_chat(s, "Bob")
        await upgrade_async(empty_db_url)
        assert await _hits(db, ann, ["kirkwal"]) == [(str(ann_chat), 1), (str(ann_chat), 2)]
        if db.dialect == "sqlite":
            assert await _indexed(db) == 2 * len(LINES)
            async with db.sessions() as s:
                sizes = text("SELECT count(*) FROM sqlite_master WHERE name = 'recall_fts_docsize'")
                assert (await s.execute(sizes)).scalar_one() == 0

        async with db.transaction() as s:  # an edit supersedes the first message: never recalled
            await s.execute(
                update(Message)
                .where(Message.session_id == ann_chat, Message.seq == 1)
                .values(superseded_at=Message.created_at)
            )
        assert await _hits(db, ann, ["kirkwal"]) == [(str(ann_chat), 2)]

        async with db.transaction() as s:  # a deleted chat leaves the index with its messages
            await delete_session(s, ann, ann_chat)
        assert await _hits(db, ann, ["kirkwal"]) == []
        assert len(await _hits(db, bob, ["kirkwal"])) == 2
        if db.dialect == "sqlite":
            assert await _indexed(db) == len(LINES)
            async with db.transaction() as s:
                await s.execute(text("INSERT INTO recall_fts(recall_fts) VALUES ('integrity-check')"))

        await downgrade_async(empty_db_url, "0019am")
        await upgrade_async(empty_db_url)
        assert len(await _hits(db, bob, ["kirkwal"])) == 2
        assert await _hits(db, ann, ["kirkwal"]) == []
    finally:
        await db.dispose()
