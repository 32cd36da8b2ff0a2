"""What a message stores when written (counts, search terms, embedding) and what scoping asks the
database for: full-text candidates within one session, outlines, totals of what was left out."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import Message
from orrery.memory.embeddings import DIMENSIONS
from orrery.memory.history import DbHistory
from orrery.memory.message_index import encodings_for, written_encodings
from orrery.memory.messages import append_message
from orrery.memory.scoping import ScopingContext, get_strategy
from orrery.repo import chat
from orrery.text import analyze
from orrery.tokens import TokenCounter, counter_for
from tests.support.factories import make_user

COUNTER = counter_for("offline")


async def _session(db: Database, texts: list[str], name: str = "Ada") -> tuple[Any, Any]:
    async with db.transaction() as s:
        user = await make_user(s, name)
        c = await chat.create_session(s, user.id)
        for i, text in enumerate(texts):
            await append_message(
                s, user.id, c.id, chat.NewMessage("user" if i % 2 == 0 else "assistant", text)
            )
    return user.id, c.id


async def test_message_stores_counts_terms_and_embedding_once(db: Database) -> None:
    _, sid = await _session(db, ["The review processes changed: news at 9."])
    async with db.sessions() as s:
        m = (await s.execute(select(Message).where(Message.session_id == sid))).scalar_one()
    written = written_encodings()  # the configured models' encodings: the offline model's by default
    assert m.token_counts == {name: TokenCounter("test", name, True).count(m.content) for name in written}
    assert m.search_terms == " ".join(analyze(m.content)) and "process" in m.search_terms.split()
    assert m.embedding is not None and len(m.embedding) == 2 * DIMENSIONS


def test_counts_are_stored_in_the_encodings_of_the_configured_models(settings: Settings) -> None:
    """A server loads only the encodings it counts with: the model's and its fallbacks'."""
    assert encodings_for(settings) == ("cl100k_base",)
    assert encodings_for(settings.model_copy(update={"model": "openai/gpt-4o-mini"})) == ("o200k_base",)
    both = settings.model_copy(update={"model": "openai/gpt-4o", "model_fallbacks": "anthropic/claude-3"})
    assert encodings_for(both) == ("cl100k_base", "o200k_base")


async def test_a_counter_of_an_encoding_not_stored_counts_on_read(db: Database) -> None:
    _, sid = await _session(db, ["The approval process is slow.", "It is."])
    other = counter_for("gpt-4o")  # a per-turn model of another encoding than the stored one
    async with db.sessions() as s, DbHistory(s, sid, 2).window(10) as window:
        assert window.costs(other) == [other.count_message(m.role, m.content) for m in window.messages]
        assert await DbHistory(s, sid, 2).totals(2, "o200k_base") == (2, None)


async def test_search_is_stemmed_and_stays_in_the_session(db: Database) -> None:
    texts = ["We talked about the weather.", "The approval process is slow.", "Lunch was fine.", "Okay."]
    _, mine = await _session(db, texts)
    _, other = await _session(db, texts, name="Bob")
    async with db.sessions() as s:
        history = DbHistory(s, mine, 4)
        assert await history.search(analyze("Why are processes so slow?"), 10) == [2]
        assert await history.search(["nothing"], 10) == []
        assert await history.search([], 10) == []
        async with history.window(10) as window:
            assert [m.seq for m in window.messages] == [1, 2, 3, 4]
            assert window.costs(COUNTER) == [
                COUNTER.count_message(m.role, m.content) for m in window.messages
            ]
            assert window.vectors() is not None and all(window.with_vectors())
            assert window.search(analyze("Why are processes so slow?"), 10) == [1]  # positions
        count, tokens = await history.totals(3, "cl100k_base")
        assert count == 3 and tokens == sum(COUNTER.count(t) for t in texts[:3])
        assert (await history.fetch([4, 2]))[0].content == texts[1]
        other_history = DbHistory(s, other, 4)
        assert await other_history.search(["process"], 10) == [2]
        assert await history.search(["process"], 10, before_seq=2) == []


async def test_relevance_and_token_budget_read_stored_values(db: Database, settings: Settings) -> None:
    texts = ["Our rescue greyhound is called Biscuit."] + [
        f"Filler line {i} about the weekend." for i in range(40)
    ]
    _, sid = await _session(db, texts)
    async with db.sessions() as s:

        def ctx(budget: int) -> ScopingContext:
            return ScopingContext(
                agent="coach",
                session_id=sid,
                history=DbHistory(s, sid, len(texts)),
                query="What breed is the rescue dog?",
                budget=budget,
                counter=COUNTER,
                settings=settings,
            )

        picked = await get_strategy("relevance").select(ctx(120))
        assert picked.messages[0]["content"] == texts[0]
        assert picked.included[0].reason.startswith("recalled") and picked.included[0].key == "seq 1"
        newest = await get_strategy("token_budget").select(ctx(60))
        left_out = newest.excluded[0]
        assert left_out.key.startswith("seq 1-") and "older messages, ~" in left_out.reason
        assert left_out.tokens and left_out.tokens > 100


async def test_another_users_session_has_no_candidates(db: Database) -> None:
    _, mine = await _session(db, ["Secret plan about the merger."])
    async with db.sessions() as s:
        assert await DbHistory(s, uuid.uuid4(), 1).search(["merger"], 10) == []
        assert await DbHistory(s, mine, 1).search(["merger"], 10) == [1]


async def test_only_messages_that_called_tools_say_so(db: Database) -> None:
    user, sid = await _session(db, ["Look it up, please."])
    call = [{"id": "c1", "name": "search_knowledge", "args": {"query": "pricing"}}]
    async with db.transaction() as s:
        await append_message(s, user, sid, chat.NewMessage("assistant", "", tool_calls=call))
    async with db.sessions() as s:
        history = DbHistory(s, sid, 2)
        assert [m.has_tool_calls for m in await history.fetch([1, 2])] == [False, True]
        async with history.window(10) as window:
            assert [m.has_tool_calls for m in window.messages] == [False, True]
