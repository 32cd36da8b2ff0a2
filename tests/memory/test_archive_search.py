"""The search of a long chat's older messages (`memory/archive_search.py`): a rare word is found
wherever it was said, a word the chat keeps using is matched among its newest older messages, and
each chat's lookups stay in that chat, on both dialects."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import delete, text

from bench.chats import write_chat
from orrery.db.engine import Database
from orrery.db.models import Message
from orrery.memory.archive_search import NEWEST_ROWS, RARE_ROWS, chat_key, split_terms
from orrery.memory.history import DbHistory
from orrery.repo import chat
from orrery.text import analyze
from tests.support.factories import make_user

OLDER = 600
FERRY_AT = 7
"""The one old message about the ferry, far before the newest older messages."""


def _content(i: int) -> str:
    if i == FERRY_AT:
        return "The ferry to the island leaves at nine on Saturdays."
    return f"Notes on the garden, part {i}: weeding and watering." if i % 2 else f"Plain line {i}."


async def _long_chat(db: Database, name: str) -> uuid.UUID:
    """A chat of `OLDER` messages written in bulk (what a long chat holds), half about the garden."""
    async with db.transaction() as s:
        user = await make_user(s, name)
        c = await chat.create_session(s, user.id)
        await write_chat(s, c.id, [_content(i) for i in range(1, OLDER + 1)])
        return c.id


def test_rare_words_first_while_their_expected_matches_fit() -> None:
    rates = {"garden": 0.5, "water": 0.5, "ferri": 0.0, "island": 0.01}
    rare, common = split_terms(["garden", "ferri", "island", "water"], rates, 4_000, 20)
    assert rare == ["ferri", "island"] and common == ["garden", "water"]
    # a short stretch of older messages: every word's matches fit, so every word is looked up
    assert split_terms(["garden", "ferri"], rates, RARE_ROWS * 20, 20) == (["ferri", "garden"], [])
    assert split_terms(["garden"], {}, 10**6, 20) == (["garden"], [])  # never seen: rare


async def test_a_rare_word_is_found_however_old_and_a_common_one_among_the_newest(db: Database) -> None:
    sid = await _long_chat(db, "Ada")
    terms = analyze("When does the ferry leave, and what about the garden?")
    rates = {"garden": 0.5}  # as the window of newer messages shows it
    async with db.sessions() as s:
        found = await DbHistory(s, sid, OLDER).search(terms, 20, before_seq=OLDER + 1, rates=rates)
    assert found[0] == FERRY_AT  # the rare word outranks the common one
    garden = [seq for seq in found if seq != FERRY_AT]
    assert garden and all(seq % 2 for seq in garden)
    assert len(found) <= 20
    # without the hint every word is looked up everywhere: the same best match
    async with db.sessions() as s:
        assert (await DbHistory(s, sid, OLDER).search(terms, 20))[0] == FERRY_AT


async def test_common_words_are_matched_among_the_newest_older_messages(db: Database) -> None:
    sid = await _long_chat(db, "Ada")
    async with db.sessions() as s:
        found = await DbHistory(s, sid, OLDER).search(
            ["garden"], 5, before_seq=OLDER + 1, rates={"garden": 0.5}
        )
    assert len(found) == 5 and all(seq % 2 for seq in found)
    if db.engine.dialect.name == "postgresql":  # SQLite's FTS5 ranks every match inside its index
        assert min(found) >= OLDER + 1 - NEWEST_ROWS * 5


async def test_each_chat_keys_its_own_terms(db: Database) -> None:
    mine, other = await _long_chat(db, "Ada"), await _long_chat(db, "Bob")
    async with db.sessions() as s:
        assert await DbHistory(s, other, OLDER).search(["ferri"], 5) == [FERRY_AT]
        await s.execute(delete(Message).where(Message.session_id == other))
        assert await DbHistory(s, other, OLDER).search(["ferri"], 5) == []
        assert await DbHistory(s, mine, OLDER).search(["ferri"], 5) == [FERRY_AT]
        if db.engine.dialect.name == "postgresql":
            stored = await s.scalar(
                text("SELECT chat_terms::text FROM messages WHERE session_id = :m AND seq = :q"),
                {"m": mine, "q": FERRY_AT},
            )
            assert f"'{chat_key(mine)}ferri'" in stored


async def test_the_chat_indexes_are_written_through(db: Database) -> None:
    """No pending list for a search to read whole (0027ct): the GIN indexes on messages take each
    row as it is written."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("GIN indexes are PostgreSQL's")
    async with db.sessions() as s:
        rows = (
            await s.execute(
                text(
                    "SELECT relname, reloptions FROM pg_class WHERE relname IN "
                    "('ix_messages_chat_terms', 'ix_messages_session_search')"
                )
            )
        ).all()
    assert {name for name, _ in rows} >= {"ix_messages_chat_terms"}
    assert all("fastupdate=off" in (options or []) for _, options in rows)
