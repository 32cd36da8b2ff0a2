"""The history window a process keeps between turns: it reads only new messages, and it is never
stale, whoever changed the session (a rewind here, an edit by hand, another process)."""

from __future__ import annotations

import asyncio
import textwrap
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import select, text, update

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import ChatSession, Message
from orrery.memory.history import DbHistory
from orrery.memory.history_cache import DEFAULT_MB, MB, history_cache
from orrery.memory.messages import append_message
from orrery.memory.scoping import ScopingContext, get_strategy
from orrery.ops.metrics import exposition
from orrery.repo import chat
from orrery.text import analyze
from orrery.tokens import counter_for
from tests.support.entrypoint import server_launcher
from tests.support.factories import make_user

COUNTER = counter_for("offline")


async def _session(db: Database, texts: list[str]) -> tuple[uuid.UUID, uuid.UUID]:
    async with db.transaction() as s:
        user = await make_user(s)
        c = await chat.create_session(s, user.id)
    await _append(db, user.id, c.id, texts)
    return user.id, c.id


async def _append(db: Database, user_id: uuid.UUID, sid: uuid.UUID, texts: list[str]) -> None:
    async with db.transaction() as s:
        for text_ in texts:
            count = (await chat.get_session(s, user_id, sid)).message_count
            role = "user" if count % 2 == 0 else "assistant"
            await append_message(s, user_id, sid, chat.NewMessage(role, text_))


async def _window(db: Database, sid: uuid.UUID, limit: int = 100) -> tuple[list[str], int]:
    """The window's texts as relevance would see them now, and the queries it took."""
    async with db.sessions() as s:
        latest = (
            await s.execute(select(ChatSession.message_count).where(ChatSession.id == sid))
        ).scalar_one()
        history = DbHistory(s, sid, latest)
        async with history.window(limit) as window:
            return [m.content for m in window.messages], history.queries


async def test_a_turn_reads_only_new_messages(db: Database) -> None:
    user, sid = await _session(db, [f"message {i}" for i in range(6)])
    texts, _ = await _window(db, sid)
    hits = history_cache.hits
    await _append(db, user, sid, ["message 6", "message 7"])
    again, queries = await _window(db, sid)
    assert again == texts + ["message 6", "message 7"]
    assert queries == 1 and history_cache.hits == hits + 1


async def test_a_rewind_and_new_reply_are_seen(db: Database) -> None:
    user, sid = await _session(db, ["first question", "old answer", "second question", "old reply"])
    await _window(db, sid)
    async with db.transaction() as s:
        await chat.rewind_to_user_message(s, user, sid, 1)
    await _append(db, user, sid, ["new answer"])  # same seq as "old answer"
    assert (await _window(db, sid))[0] == ["first question", "new answer"]


async def test_an_edit_made_by_hand_is_seen_and_a_status_change_costs_nothing(
    db: Database, settings: Settings
) -> None:
    _, sid = await _session(db, ["The launch is on Monday.", "Noted."])
    await _window(db, sid)
    other = Database.from_settings(settings)  # another engine: what a second process would do
    try:
        async with other.transaction() as s:
            await s.execute(
                update(Message).where(Message.session_id == sid, Message.seq == 2).values(status="failed")
            )
        epoch = "SELECT history_epoch FROM chat_sessions"
        async with other.sessions() as s:
            assert (await s.execute(text(epoch))).scalar_one() == 0
        async with other.transaction() as s:
            await s.execute(
                update(Message)
                .where(Message.session_id == sid, Message.seq == 1)
                .values(
                    content="The launch moved to Friday.",
                    search_terms=" ".join(analyze("launch moved friday")),
                )
            )
    finally:
        await other.dispose()
    assert (await _window(db, sid))[0] == ["The launch moved to Friday.", "Noted."]


async def test_another_process_rewinding_the_session_is_seen(db: Database, settings: Settings) -> None:
    user, sid = await _session(db, ["Where is the offsite?", "In Lisbon.", "And when?", "In May."])
    assert (await _window(db, sid))[0][-1] == "In May."
    script = textwrap.dedent(
        f"""
        import asyncio, uuid
        from orrery.db.engine import Database
        from orrery.repo import chat
        from orrery.memory.messages import append_message
        from tests.conftest import settings_for

        async def main():
            db = Database.from_settings(settings_for({settings.database_url!r}))
            user, sid = uuid.UUID({str(user)!r}), uuid.UUID({str(sid)!r})
            async with db.transaction() as s:
                await chat.rewind_to_user_message(s, user, sid, 2)
                await append_message(s, user, sid, chat.NewMessage("assistant", "In June, not May."))
            await db.dispose()

        asyncio.run(main())
        """
    )
    # a process of its own (its own engine and caches), forked from the test process's launcher
    exit_code, _, stderr = await asyncio.to_thread(
        server_launcher().run_split, [], code=script, cwd=Path.cwd()
    )
    assert exit_code == 0, stderr
    assert (await _window(db, sid))[0] == [
        "Where is the offsite?",
        "In Lisbon.",
        "And when?",
        "In June, not May.",
    ]


async def test_the_cache_is_bounded_and_off_means_every_read_is_whole(db: Database) -> None:
    user, sid = await _session(db, [f"line {i}" for i in range(8)])
    try:
        history_cache.configure(0.001)  # 1 kB: this session alone is larger, never kept
        await _window(db, sid)
        misses = history_cache.misses
        await _window(db, sid)
        assert history_cache.misses == misses + 1
        history_cache.configure(0)
        await _append(db, user, sid, ["line 8"])
        assert (await _window(db, sid))[0][-1] == "line 8"
    finally:
        history_cache.configure(DEFAULT_MB)


async def test_a_byte_budget_keeps_the_most_recent_windows_and_counts_what_it_evicts(db: Database) -> None:
    user, first = await _session(db, [f"first chat, line {i}" for i in range(6)])
    _, second = await _session(db, [f"second chat, line {i}" for i in range(6)])
    try:
        await _window(db, first)
        one = history_cache.held_bytes
        assert one > 0
        history_cache.configure(1.5 * one / MB)  # room for one window, not two
        await _window(db, first)
        evicted = history_cache.evictions
        await _window(db, second)  # the least recently used (the first chat's) goes
        assert history_cache.evictions == evicted + 1
        assert history_cache.held_bytes <= 1.5 * one
        misses = history_cache.misses
        assert (await _window(db, first))[0][-1] == "first chat, line 5"  # read again, whole and right
        assert history_cache.misses == misses + 1
        metrics = exposition()[0].decode()
        assert 'orrery_history_cache_total{event="eviction"}' in metrics
        assert "orrery_history_cache_bytes" in metrics
    finally:
        history_cache.configure(DEFAULT_MB)


def _ctx(s: Any, sid: uuid.UUID, latest: int, settings: Settings, query: str) -> ScopingContext:
    return ScopingContext(
        agent="coach",
        session_id=sid,
        history=DbHistory(s, sid, latest),
        query=query,
        budget=300,
        counter=COUNTER,
        settings=settings,
    )


async def test_relevance_is_the_same_from_the_cache_as_from_a_fresh_read(
    db: Database, settings: Settings
) -> None:
    texts = ["Our dog Biscuit is a greyhound."] + [f"Weekend plan number {i} is hiking." for i in range(40)]
    texts += ["What breed is Biscuit?"]
    _, sid = await _session(db, texts)
    for query in ("What breed is Biscuit?", "hiking plan 7", "nothing in common"):
        results = []
        for _ in range(2):  # first a fresh read, then from the cache
            async with db.sessions() as s:
                result = await get_strategy("relevance").select(_ctx(s, sid, len(texts), settings, query))
            results.append((result.messages, result.included, result.excluded))
        assert results[0] == results[1]
        history_cache.clear()


async def test_relevance_reaches_past_the_scan_window_through_the_full_text_index(
    db: Database, settings: Settings
) -> None:
    settings = settings.model_copy(update={"history_scan_limit": 10})
    texts = ["Our dog Biscuit is a greyhound."] + [f"Weekend plan number {i} is hiking." for i in range(30)]
    _, sid = await _session(db, texts)
    async with db.sessions() as s:
        result = await get_strategy("relevance").select(
            _ctx(s, sid, len(texts), settings, "What breed is Biscuit?")
        )
    assert "Our dog Biscuit is a greyhound." in [m["content"] for m in result.messages]
    assert any("full-text matches considered" in item.reason for item in result.excluded)


async def test_a_held_row_that_was_never_committed_is_not_served(db: Database) -> None:
    user, sid = await _session(db, ["First question?", "First answer."])
    await _window(db, sid)
    async with db.sessions() as s:  # append, read the window in the same transaction, roll back
        await append_message(s, user, sid, chat.NewMessage("user", "A draft never sent."))
        async with DbHistory(s, sid, 3).window(100) as window:
            assert window.messages[-1].content == "A draft never sent."
        await s.rollback()
    await _append(db, user, sid, ["The real second question?"])
    assert (await _window(db, sid))[0] == ["First question?", "First answer.", "The real second question?"]


async def test_an_archived_match_comes_with_its_tool_results(db: Database, settings: Settings) -> None:
    settings = settings.model_copy(update={"history_scan_limit": 10})
    user, sid = await _session(db, ["Which breed is Biscuit?", "Looking up Biscuit in the registry."])
    async with db.transaction() as s:
        await append_message(s, user, sid, chat.NewMessage("tool", "registry: Biscuit, greyhound"))
    await _append(db, user, sid, [f"Weekend plan number {i} is hiking." for i in range(12)])
    async with db.sessions() as s:
        latest = (
            await s.execute(select(ChatSession.message_count).where(ChatSession.id == sid))
        ).scalar_one()
        ctx = _ctx(s, sid, latest, settings, "What did the registry say about Biscuit?")
        ctx.options["recent_window"] = -1  # a bad option is treated as 0, not a crash
        result = await get_strategy("relevance").select(ctx)
    shown = [m["content"] for m in result.messages]
    assert "Looking up Biscuit in the registry." in shown
    assert shown[shown.index("Looking up Biscuit in the registry.") + 1] == "registry: Biscuit, greyhound"
