"""Forget a chat: delete it (it leaves recall at once), optionally the facts said in it (with their
lineage: `orrery.repo.lineage`), the person's stored receipts, and rebuild the learned summary if the
pattern analyst drew on it — all in the caller's one transaction.

Every door (REST, web, CLI) deletes a chat through `forget_chat`, so each does the same.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.repo import sessions
from orrery.repo.chat import get_session
from orrery.repo.facts import forget_session_facts
from orrery.repo.lineage import rebuild_summary


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
    return Forgotten(chat.id, facts, await rebuild_summary(session, user_id, [chat.id]))
