"""A short conversation whose first message only recall finds again, for comparing scoping strategies."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select

from orrery.db.engine import Database
from orrery.db.models import Message, SessionSummary
from orrery.memory.messages import append_message
from orrery.repo import chat

TOPICS = (
    "The launch party budget is 4200 euros, approved by Dana.",
    "My dentist appointment moved to Friday.",
    "I want to run three times a week.",
    "The pricing page copy needs a legal review.",
    "Book flights to Lisbon for May.",
    "Sam owes me the onboarding deck.",
    "Water the plants on Sunday.",
    "What was the launch party budget again?",
)
"""One user message per turn (odd seqs 1, 3, ... 15), each answered by the planner (even seqs)."""


async def write_conversation(db: Database, user_id: Any, session_id: Any) -> None:
    """Append the 16 messages of TOPICS and their replies."""
    async with db.transaction() as s:
        for topic in TOPICS:
            await append_message(s, user_id, session_id, chat.NewMessage("user", topic))
            reply = chat.NewMessage("assistant", f"Noted: {topic.lower()}", agent_id="planner")
            await append_message(s, user_id, session_id, reply)


async def stored(db: Database, session_id: Any) -> tuple[int, list[tuple[str, int]]]:
    """The session's message count and its stored summaries (text, covered through): what a
    preview must leave as it found them."""
    sid = uuid.UUID(str(session_id))
    async with db.sessions() as s:
        messages = await s.scalar(select(func.count()).where(Message.session_id == sid))
        rows = await s.execute(
            select(SessionSummary.summary, SessionSummary.covered_through_seq).where(
                SessionSummary.session_id == sid
            )
        )
        return int(messages or 0), [(r[0], r[1]) for r in rows]


async def store_summary(db: Database, session_id: Any, through: int) -> None:
    """A stored summary as later turns would have left it."""
    from orrery.memory.summaries import SummaryStore

    async with db.transaction() as s:
        await SummaryStore(s).save(uuid.UUID(str(session_id)), "[2025-01-01] User: earlier", through, "x", 9)
