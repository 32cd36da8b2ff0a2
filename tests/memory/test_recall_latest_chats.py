"""The latest value wins and long replies by passage, through a turn's whole working context (both
databases, the local embedder): the newer statement first, the older marked with its date, another
person's statement never paired with the caller's, and a long reply's relevant part recalled."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from orrery.config import Settings
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.memory.messages import append_message
from orrery.repo.chat import NewMessage, create_session
from orrery.repo.identity import add_member, create_project, create_user

DAY = datetime(2025, 3, 2, 18, tzinfo=UTC)
OLD = "Our nutrition API has a daily quota of 1,000 requests."
NEW = "Good news: the vendor raised it, the new daily quota for the nutrition API is 1,200 requests."
FILLER = ["Can we review the login screen?", "Sure, the login screen needs a loading state."]


async def _chat(s: Any, user: uuid.UUID, project: uuid.UUID, day: int, lines: list[str]) -> None:
    chat = await create_session(s, user, project_id=project, title=f"day {day}")
    chat.created_at = DAY + timedelta(days=day)
    for i, line in enumerate(lines):
        role = "user" if i % 2 == 0 else "assistant"
        at = DAY + timedelta(days=day, minutes=i)
        await append_message(s, user, chat.id, NewMessage(role, line, created_at=at))


async def _ask(db: Database, settings: Settings, user: uuid.UUID, project: uuid.UUID, question: str) -> Any:
    async with db.transaction() as s:
        chat = await create_session(s, user, project_id=project)
        at = DAY + timedelta(days=30)
        await append_message(s, user, chat.id, NewMessage("user", question, created_at=at))
        wc = await assemble_working_context(
            s, agent="coach", session_id=chat.id, user_id=user, settings=settings
        )
        await s.rollback()
    return wc


def _section(wc: Any) -> Any:
    return next(r for r in wc.receipt.sections if r.name == "earlier_chats")


async def test_the_newer_value_first_and_the_older_marked(db: Database, settings: Settings) -> None:
    async with db.transaction() as s:
        ana = (await create_user(s, f"ana-{uuid.uuid4().hex[:6]}@example.org", "Ana")).id
        project = await create_project(s, ana, "Recipes")
        await _chat(s, ana, project.id, 0, [*FILLER, OLD, "Noted."])
        await _chat(s, ana, project.id, 6, [*FILLER, NEW, "Great."])
    wc = await _ask(db, settings, ana, project.id, "What is the daily quota of the nutrition API?")
    included = _section(wc).included
    seqs = [(i.chat_title, i.seq) for i in included]
    assert seqs.index(("day 6", 3)) < seqs.index(("day 0", 3))  # the newer first
    older = next(i for i in included if (i.chat_title, i.seq) == ("day 0", 3))
    assert "superseded by the message of 2025-03-08" in older.reason
    assert f'- [2025-03-02] user (superseded by the message of 2025-03-08): "{OLD}"' in wc.system_prompt
    assert f'- [2025-03-08] user (updates the message of 2025-03-02): "{NEW}"' in wc.system_prompt


async def test_another_persons_statement_is_never_paired(db: Database, settings: Settings) -> None:
    async with db.transaction() as s:
        ana = (await create_user(s, f"ana-{uuid.uuid4().hex[:6]}@example.org", "Ana")).id
        ben = (await create_user(s, f"ben-{uuid.uuid4().hex[:6]}@example.org", "Ben")).id
        project = await create_project(s, ana, "Shared")
        await add_member(s, ana, project.id, ben, "editor")
        await _chat(s, ana, project.id, 0, [*FILLER, OLD, "Noted."])
        await _chat(s, ben, project.id, 6, [*FILLER, NEW, "Great."])
    wc = await _ask(db, settings, ana, project.id, "What is the daily quota of the nutrition API?")
    assert OLD in wc.system_prompt and "1,200" not in wc.system_prompt
    assert "superseded" not in wc.system_prompt and "updates the message" not in wc.system_prompt
    assert all("superseded" not in i.reason for i in _section(wc).included)


FACT = "Cache the search results in Redis with a time to live of 300 seconds, keyed by the query string."


def _long_reply() -> str:
    filler = (
        "There are a few things to weigh before we commit to an approach: the simplest option keeps the "
        "moving parts few and the data flow obvious, so that a later change does not ripple through every "
        "screen, and labels, focus order and contrast are cheap to get right early."
    )
    paragraphs = [f"Point {n}: {filler}" for n in range(1, 12)]
    paragraphs.insert(4, FACT)
    paragraphs.insert(8, "- list the screens\n- agree on the names\n- write the tests first")
    return "\n\n".join(paragraphs)


async def test_a_long_replys_relevant_part_when_the_whole_does_not_fit(
    db: Database, settings: Settings
) -> None:
    async with db.transaction() as s:
        ana = (await create_user(s, f"ana-{uuid.uuid4().hex[:6]}@example.org", "Ana")).id
        project = await create_project(s, ana, "Recipes")
        await _chat(s, ana, project.id, 0, [*FILLER, "How should we cache the search page?", _long_reply()])
    tight = settings.model_copy(update={"budget_earlier_chats": 300})
    wc = await _ask(db, tight, ana, project.id, "What time to live did you suggest for the search cache?")
    section = _section(wc)
    assert f'- [2025-03-02] assistant (part 5 of 13): "{FACT}"' in wc.system_prompt
    item = next(i for i in section.included if i.seq == 4)
    assert item.key.endswith("seq 4 part 5/13") and "part 5 of 13 of its message" in item.reason
    assert section.tokens <= 300
