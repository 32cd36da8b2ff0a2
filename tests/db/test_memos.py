"""Memos: what a read-only session changed, written later in a write transaction — only the
changed columns (a column another request changed meanwhile keeps its value), new rows inserted."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from orrery.db.engine import Database
from orrery.db.memos import pending_memos, write_memos
from orrery.db.models import ChatSession, SessionSummary


async def test_memos_write_what_a_read_changed_and_nothing_else(db: Database, demo: Any) -> None:
    async with db.readers() as s:
        record = (await s.execute(select(ChatSession).where(ChatSession.user_id == demo.user_id))).scalar()
        assert record is not None
        sid = record.id
        record.knowledge_focus, record.knowledge_packet = "task:1", "## Knowledge\n- an entry"
        s.add(
            SessionSummary(session_id=sid, summary="so far", covered_through_seq=2, model="m", token_count=3)
        )
        memos = pending_memos(s)
    assert sorted((m.model.__name__, m.key is None) for m in memos) == [
        ("ChatSession", False),
        ("SessionSummary", True),
    ]
    assert next(m for m in memos if m.key).values == {
        "knowledge_focus": "task:1",
        "knowledge_packet": "## Knowledge\n- an entry",
    }
    async with db.transaction() as s:  # meanwhile another request renames the session
        (await s.get(ChatSession, sid)).title = "renamed meanwhile"  # type: ignore[union-attr]
    async with db.transaction() as s:
        await write_memos(s, memos)
    async with db.sessions() as s:
        saved = await s.get(ChatSession, sid)
        stored = await s.get(SessionSummary, sid)
    assert saved is not None and saved.title == "renamed meanwhile"
    assert (saved.knowledge_focus, saved.knowledge_packet) == ("task:1", "## Knowledge\n- an entry")
    assert stored is not None and (stored.summary, stored.covered_through_seq) == ("so far", 2)


async def test_a_read_that_changed_nothing_leaves_no_memos(db: Database, demo: Any) -> None:
    async with db.readers() as s:
        record = (await s.execute(select(ChatSession).where(ChatSession.user_id == demo.user_id))).scalar()
        assert record is not None
        record.title = record.title  # the same value: no change
        assert pending_memos(s) == []
