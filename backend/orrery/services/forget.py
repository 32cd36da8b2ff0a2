"""Forget a chat: delete it (it leaves recall at once), optionally the facts said in it, and rebuild
the learned summary if the pattern analyst drew on it — all in the caller's one transaction.

Every door (REST, web, CLI) deletes a chat through `forget_chat`, so each does the same.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.agents.patterns import REFRESH_SUMMARY_JOB
from orrery.config import Settings
from orrery.db.base import utcnow
from orrery.db.models import UserSummary
from orrery.ops.jobs import enqueue_once
from orrery.repo import sessions
from orrery.repo.chat import get_session
from orrery.repo.facts import forget_session_facts


@dataclass(frozen=True)
class Forgotten:
    """What deleting a chat took with it."""

    session_id: uuid.UUID
    facts: int
    """Facts forgotten with it (`forget_facts`)."""
    summary_rebuilt: bool
    """The learned summary drew on this chat: it was cleared and a rebuild queued."""


async def forget_chat(
    session: AsyncSession,
    settings: Settings,
    user_id: uuid.UUID,
    session_id: uuid.UUID | str,
    *,
    forget_facts: bool = False,
) -> Forgotten:
    """Delete one of the person's chats (another's is not found); with `forget_facts` the facts
    whose source it is too. A summary that read it is cleared and its rebuild queued, so nothing
    learned from a forgotten chat stays behind."""
    chat = await get_session(session, user_id, session_id)
    await sessions.delete_session(session, user_id, chat.id)
    facts = await forget_session_facts(session, user_id, chat.id) if forget_facts else 0
    return Forgotten(chat.id, facts, await _rebuild_summary(session, settings, user_id, chat.id))


async def _rebuild_summary(
    session: AsyncSession, settings: Settings, user_id: uuid.UUID, chat_id: uuid.UUID
) -> bool:
    summary = await session.get(UserSummary, user_id)
    if summary is None or str(chat_id) not in {str(s) for s in summary.source_sessions or []}:
        return False
    summary.patterns, summary.wins, summary.struggles, summary.source_sessions = [], [], [], []
    summary.updated_at = utcnow()
    await session.flush()
    await enqueue_once(
        session,
        REFRESH_SUMMARY_JOB,
        {"user_id": str(user_id), "model": settings.model},
        key=f"summary:{user_id}",
        max_attempts=settings.jobs_max_attempts,
    )
    return True
