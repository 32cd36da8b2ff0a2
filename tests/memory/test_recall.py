"""Recall from the person's earlier chats: whom and what it may recall, its section and receipt, its
round trips, and that a process's copies never outlive a change (both databases)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update

from orrery.config import Settings
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.db.models import ChatSession, Message, User
from orrery.memory.messages import append_message
from orrery.repo.chat import NewMessage, create_session
from orrery.repo.identity import add_member, create_project, create_user
from orrery.repo.sessions import delete_session
from tests.support.db_events import count_statements

DAY = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
QUESTION = "Which harbour did the sailing trip leave from?"


async def _person(s: Any, name: str) -> uuid.UUID:
    user = await create_user(s, f"{name}-{uuid.uuid4().hex[:6]}@example.org", name)
    return user.id


async def _chat(
    s: Any, user_id: uuid.UUID, project_id: uuid.UUID | None, title: str, lines: list[str], day: int = 0
) -> ChatSession:
    chat = await create_session(s, user_id, project_id=project_id, title=title)
    chat.created_at = DAY + timedelta(days=day)
    for i, line in enumerate(lines):
        role = "user" if i % 2 == 0 else "assistant"
        at = DAY + timedelta(days=day, minutes=i)
        await append_message(s, user_id, chat.id, NewMessage(role, line, created_at=at))
    return chat


async def _ask(db: Database, settings: Settings, user_id: uuid.UUID, project_id: uuid.UUID | None) -> Any:
    """A new chat whose first message is the question; its working context (rolled back after)."""
    async with db.transaction() as s:
        chat = await create_session(s, user_id, project_id=project_id)
        await append_message(
            s, user_id, chat.id, NewMessage("user", QUESTION, created_at=DAY + timedelta(days=30))
        )
        wc = await assemble_working_context(
            s, agent="coach", session_id=chat.id, user_id=user_id, settings=settings
        )
        await s.rollback()
    return wc


def _section(wc: Any) -> Any:
    return next(r for r in wc.receipt.sections if r.name == "earlier_chats")


def _recalled_titles(wc: Any) -> set[str]:
    return {i.chat_title for i in _section(wc).included}


TRIP = ["The sailing trip left from Kirkwall harbour on a grey morning.", "Kirkwall, noted."]


async def test_recalls_own_chats_only_in_a_shared_project(db: Database, settings: Settings) -> None:
    async with db.transaction() as s:
        ana, ben = await _person(s, "ana"), await _person(s, "ben")
        project = await create_project(s, ana, "Shared")
        await add_member(s, ana, project.id, ben, "editor")
        await _chat(s, ana, project.id, "ana trip", TRIP)
        await _chat(s, ben, project.id, "ben trip", ["The sailing trip left from Stromness harbour.", "ok"])
    wc = await _ask(db, settings, ana, project.id)
    assert _recalled_titles(wc) == {"ana trip"}
    assert "Kirkwall" in wc.system_prompt and "Stromness" not in wc.system_prompt
    wc = await _ask(db, settings, ben, project.id)
    assert _recalled_titles(wc) == {"ben trip"}
    assert "Kirkwall" not in wc.system_prompt


async def test_receipt_and_section_say_what_came_from_where(db: Database, settings: Settings) -> None:
    async with db.transaction() as s:
        ana = await _person(s, "ana")
        project = await create_project(s, ana, "Trips")
        chat = await _chat(
            s, ana, project.id, 'Orkney "plans"', [*TRIP, "Lunch was soup.", "Soup it is."], day=2
        )
    wc = await _ask(db, settings, ana, project.id)
    section = _section(wc)
    assert section.title == "From earlier chats"
    first = section.included[0]
    assert first.kind == "earlier_message" and first.chat_id == str(chat.id)
    assert first.chat_title == 'Orkney "plans"' and first.chat_date == "2025-03-05"
    assert first.seq == 1 and first.date == "2025-03-05" and first.tokens > 0 and first.score > 0
    assert "shares words" in first.reason and "sail" in first.reason
    assert section.tokens <= section.budget
    conversation = next(r for r in wc.receipt.sections if r.name == "conversation")
    assert conversation.budget + section.budget == 2500  # the conversation budget, shared
    prompt = wc.system_prompt
    assert "## Excerpts from earlier chats" in prompt
    assert '### "Orkney \\"plans\\"" (chat of 2025-03-05)' in prompt  # the title is quoted data
    assert '- [2025-03-05] user: "The sailing trip left from Kirkwall harbour on a grey morning."' in prompt
    as_json = wc.receipt.as_dict()["sections"][-1]
    assert as_json["name"] == "earlier_chats" and as_json["included"][0]["chat_title"] == 'Orkney "plans"'


async def test_never_remember_false_superseded_failed_deleted_or_current(
    db: Database, settings: Settings
) -> None:
    async with db.transaction() as s:
        ana = await _person(s, "ana")
        project = await create_project(s, ana, "Trips")
        await _chat(s, ana, project.id, "kept", TRIP)
        quiet = await _chat(
            s, ana, project.id, "quiet", ["The sailing trip left from Scrabster harbour.", "ok"]
        )
        quiet.remember = False
        edited = await _chat(
            s, ana, project.id, "edited", ["The sailing trip left from Lerwick harbour.", "ok"]
        )
        failed = await _chat(s, ana, project.id, "failed", ["The sailing trip left from Wick harbour?"])
        gone = await _chat(s, ana, project.id, "gone", ["The sailing trip left from Thurso harbour.", "ok"])
    async with db.transaction() as s:
        await s.execute(update(Message).where(Message.session_id == edited.id).values(superseded_at=DAY))
        await s.execute(update(Message).where(Message.session_id == failed.id).values(status="failed"))
        await delete_session(s, ana, gone.id)
    wc = await _ask(db, settings, ana, project.id)
    assert _recalled_titles(wc) == {"kept"}
    for harbour in ("Scrabster", "Lerwick", "Wick harbour", "Thurso"):
        assert harbour not in wc.system_prompt
    async with db.transaction() as s:  # the current chat is never recalled: scoping owns it
        chat = await _chat(s, ana, project.id, "current", [QUESTION])
        wc = await assemble_working_context(
            s, agent="coach", session_id=chat.id, user_id=ana, settings=settings
        )
        assert "current" not in _recalled_titles(wc)


async def test_projects_and_the_persons_settings(db: Database, settings: Settings) -> None:
    async with db.transaction() as s:
        ana = await _person(s, "ana")
        here, there = await create_project(s, ana, "Here"), await create_project(s, ana, "There")
        await _chat(s, ana, here.id, "here", TRIP)
        await _chat(s, ana, there.id, "there", ["The sailing trip left from Scalloway harbour.", "ok"])
        await _chat(s, ana, None, "loose", ["The sailing trip left from Stornoway harbour.", "ok"])
    assert _recalled_titles(await _ask(db, settings, ana, here.id)) == {"here"}
    assert _recalled_titles(await _ask(db, settings, ana, None)) == {"loose"}  # no project: those without
    async with db.transaction() as s:
        await s.execute(update(User).where(User.id == ana).values(recall_other_projects=True))
    wc = await _ask(db, settings, ana, here.id)
    assert _recalled_titles(wc) == {"here", "there", "loose"}
    best = _section(wc).included
    assert {i.chat_title for i in best if "same focus or project" in i.reason} == {"here"}
    async with db.transaction() as s:
        await s.execute(update(User).where(User.id == ana).values(recall_across_chats=False))
    wc = await _ask(db, settings, ana, here.id)
    assert _section(wc).included == [] and "Excerpts from earlier chats" not in wc.system_prompt
    assert any("turned off" in n for n in wc.receipt.notes)


async def test_at_most_three_queries_and_copies_follow_every_change(db: Database, settings: Settings) -> None:
    from orrery.context.earlier import request_for
    from orrery.memory.recall import gather

    async with db.transaction() as s:
        ana = await _person(s, "ana")
        project = await create_project(s, ana, "Trips")
        trip = await _chat(s, ana, project.id, "trip", TRIP)
        for n in range(5):
            await _chat(s, ana, project.id, f"other {n}", [f"Note {n} about gardening and tomatoes.", "ok"])
        current = await create_session(s, ana, project_id=project.id)

    async def recalled(queries: int) -> set[tuple[str, int]]:
        async with db.transaction() as s:
            with count_statements(db) as statements:
                pool = await gather(s, request_for(current, ana, QUESTION), settings)
            assert len(statements) == pool.queries == queries
            return {(o.chat.title or "", o.messages[0].seq) for o in pool.offered}

    assert ("trip", 1) in await recalled(2)  # the chats, then their messages
    assert ("trip", 1) in await recalled(1)  # the process's copies: only the chats are read
    async with db.transaction() as s:  # another process may do any of these; the stamp tells
        await s.execute(
            update(Message).where(Message.session_id == trip.id, Message.seq == 1).values(status="failed")
        )
    assert ("trip", 1) not in await recalled(2)
    async with db.transaction() as s:
        await s.execute(update(Message).where(Message.session_id == trip.id).values(status="complete"))
    assert ("trip", 1) in await recalled(2)
    async with db.transaction() as s:
        await s.execute(update(Message).where(Message.session_id == trip.id).values(superseded_at=DAY))
    assert not {t for t, _ in await recalled(2)} & {"trip"}
    async with db.transaction() as s:
        await s.execute(update(Message).where(Message.session_id == trip.id).values(superseded_at=None))
        await s.execute(update(ChatSession).where(ChatSession.id == trip.id).values(remember=False))
    assert not {t for t, _ in await recalled(1)} & {"trip"}  # gone from the chats read every turn
    async with db.transaction() as s:
        await s.execute(update(ChatSession).where(ChatSession.id == trip.id).values(remember=True))
        await delete_session(s, ana, trip.id)
    assert not {t for t, _ in await recalled(1)} & {"trip"}


async def test_a_chat_that_grew_is_read_from_its_new_messages_and_ranks_as_if_read_whole(
    db: Database, settings: Settings
) -> None:
    """Another chat's new messages extend the process's copy of it (only they are read) and the
    offer equals the one a process holding no copy makes."""
    from orrery.context.earlier import request_for
    from orrery.memory.history_cache import history_cache
    from orrery.memory.recall import gather

    async with db.transaction() as s:
        ana = await _person(s, "ana")
        project = await create_project(s, ana, "Trips")
        trip = await _chat(s, ana, project.id, "trip", TRIP)
        await _chat(s, ana, project.id, "garden", ["Tomatoes need sun.", "noted"])
        current = await create_session(s, ana, project_id=project.id)

    async def offered() -> list[tuple[str, int, float]]:
        async with db.transaction() as s:
            pool = await gather(s, request_for(current, ana, QUESTION), settings)
        return [(o.chat.title or "", o.messages[0].seq, round(o.score, 6)) for o in pool.offered]

    await offered()  # the process now holds both chats
    async with db.transaction() as s:
        later = DAY + timedelta(days=2)
        await append_message(
            s, ana, trip.id, NewMessage("user", "We sailed back to Kirkwall harbour.", created_at=later)
        )
    grown = await offered()
    history_cache.clear()
    assert grown == await offered()
    assert ("trip", 3) in {(t, seq) for t, seq, _ in grown}


async def test_older_chats_through_the_full_text_index(
    db: Database, settings: Settings, monkeypatch: Any
) -> None:
    """Beyond the newest chats' messages, only the database's full-text matches (and their
    neighbours) are read: still the person's own, remembered, live messages."""
    from orrery.memory.recall import pool

    monkeypatch.setattr(pool, "DENSE_SCAN", 4)
    async with db.transaction() as s:
        ana, ben = await _person(s, "ana"), await _person(s, "ben")
        project = await create_project(s, ana, "Trips")
        await add_member(s, ana, project.id, ben, "editor")
        await _chat(s, ana, project.id, "old trip", [*TRIP, "Then we ate.", "Good."], day=1)
        quiet = await _chat(
            s, ana, project.id, "old quiet", ["The sailing trip left from Scrabster harbour."], day=2
        )
        quiet.remember = False
        await _chat(s, ben, project.id, "ben old", ["The sailing trip left from Stromness harbour."], day=2)
        for n in range(3):
            await _chat(s, ana, project.id, f"new {n}", [f"Tomatoes {n} need water.", "ok"], day=10 + n)
    from orrery.context.earlier import request_for
    from orrery.memory.history_cache import history_cache
    from orrery.memory.recall import gather

    history_cache.clear()
    for queries in (3, 2):  # the chats, the newest chats' messages (then held), the matches
        async with db.transaction() as s:
            chat = await create_session(s, ana, project_id=project.id)
            with count_statements(db) as statements:
                found = await gather(s, request_for(chat, ana, QUESTION), settings)
            await s.rollback()
        assert found.queries == len(statements) == queries
    wc = await _ask(db, settings, ana, project.id)
    titles = _recalled_titles(wc)
    assert "old trip" in titles and not titles & {"old quiet", "ben old"}
    assert "Kirkwall" in wc.system_prompt
    for harbour in ("Scrabster", "Stromness"):
        assert harbour not in wc.system_prompt


async def test_turns_at_once_share_the_copies_and_each_reads_its_own_snapshot(
    db: Database, settings: Settings, monkeypatch: Any
) -> None:
    """A person's turns running at once in one process read the same copies of their other chats
    (none reads a chat again because another holds it); a turn that adds a chat's new messages while
    another turn reads that copy adds them to a copy of its own, so the reader's window stays as it
    read it, and every offer equals the one a process holding no copy makes."""
    import asyncio

    from orrery.context.earlier import request_for
    from orrery.memory.embedding_models import embedding_model
    from orrery.memory.history import database_key
    from orrery.memory.history_cache import history_cache
    from orrery.memory.recall import gather, pool

    async with db.transaction() as s:
        ana = await _person(s, "ana")
        project = await create_project(s, ana, "Trips")
        trip = await _chat(s, ana, project.id, "trip", TRIP)
        await _chat(s, ana, project.id, "garden", ["Tomatoes need sun.", "noted"])
        currents = [await create_session(s, ana, project_id=project.id) for _ in range(4)]
        key = (database_key(s), "recall", trip.id, embedding_model(settings).name)

    async def offered(current: ChatSession) -> tuple[int, list[tuple[str, int, float]]]:
        async with db.transaction() as s:
            found = await gather(s, request_for(current, ana, QUESTION), settings)
        return found.queries, [
            (o.chat.title or "", o.messages[0].seq, round(o.score, 6)) for o in found.offered
        ]

    async def said(chat: ChatSession, role: str, line: str) -> None:
        async with db.transaction() as s:
            later = DAY + timedelta(days=2)
            await append_message(s, ana, chat.id, NewMessage(role, line, created_at=later))

    history_cache.clear()
    for current in currents:  # the process now holds every chat
        await offered(current)
    await said(trip, "user", "We sailed back to Kirkwall.")
    if db.dialect != "sqlite":  # (one writer at a time there: turns never overlap)
        barrier, read = asyncio.Barrier(len(currents)), pool.read_spans

        async def read_together(*args: Any) -> Any:  # every turn has planned before any goes on
            rows = await read(*args)
            await barrier.wait()
            return rows

        monkeypatch.setattr(pool, "read_spans", read_together)
    misses = history_cache.misses
    at_once = await asyncio.gather(*(offered(c) for c in currents))
    assert history_cache.misses == misses  # none read a chat whole because another turn held it
    monkeypatch.undo()
    history_cache.clear()
    assert [offer for _, offer in at_once] == [(await offered(c))[1] for c in currents]

    reader = history_cache.share(key)  # another turn, still reading the trip chat's copy
    assert reader is not None
    held = [m.content for m in reader.window.messages]
    await said(trip, "assistant", "Kirkwall again, noted.")
    queries, grown = await offered(currents[0])
    assert queries == 2 and [m.content for m in reader.window.messages] == held
    now = history_cache.share(key)
    assert now is not None and now is not reader and len(now.window) == len(held) + 1
    history_cache.release(reader)
    history_cache.release(now)
    await said(trip, "user", "And then home.")
    queries, alone = await offered(currents[0])
    assert queries == 2 and history_cache.share(key) is now and len(now.window) == len(held) + 2  # in place
    history_cache.release(now)
    history_cache.clear()
    assert (await offered(currents[0]))[1] == alone
    assert ("trip", 3) in {(t, seq) for t, seq, _ in at_once[0][1]}
