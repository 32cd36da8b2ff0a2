"""Edit-and-resend: the last user message and everything after it are marked superseded (kept, never
shown nor read into a context again), so the edited text is answered as if the old one never was.
What was learned from them goes too: the facts said in them (with their lineage), the chat's digest
and running summary, the person's stored receipts, and the learned summary when it drew on the chat."""

from __future__ import annotations

import uuid

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.models import Message, SessionSummary
from orrery.errors import ValidationError
from orrery.repo import lineage
from orrery.repo.chat import get_session
from orrery.repo.facts import forget_session_facts


async def supersede_last_user_message(
    session: AsyncSession,
    user_id: uuid.UUID,
    session_id: uuid.UUID | str,
    seq: int,
    content: str,
    client_key: str | None = None,
) -> int:
    """Mark user message `seq` (it must be the session's latest live one) and its reply superseded;
    returns how many messages were marked. A repeated request with the same `client_key` whose edit
    already ran marks nothing (the turn that follows replays)."""
    if not content.strip():
        raise ValidationError("the edited message must not be empty")
    chat = await get_session(session, user_id, session_id)
    if client_key is not None:
        done = await session.scalar(
            select(func.count()).where(Message.session_id == chat.id, Message.client_key == client_key)
        )
        if done:
            return 0
    live = (Message.session_id == chat.id, Message.superseded_at.is_(None))
    target = (
        await session.execute(select(Message.role).where(*live, Message.seq == seq))
    ).scalar_one_or_none()
    last_user = await session.scalar(select(func.max(Message.seq)).where(*live, Message.role == "user"))
    if target != "user" or last_user != seq:
        raise ValidationError(
            f"message {seq} is not the latest user message of this session: only that one can be edited"
        )
    marked = await session.execute(
        update(Message).where(*live, Message.seq >= seq).values(superseded_at=utcnow())
    )
    await session.execute(
        delete(SessionSummary).where(
            SessionSummary.session_id == chat.id, SessionSummary.covered_through_seq >= seq
        )
    )
    await forget_session_facts(session, user_id, chat.id, from_seq=seq)
    await lineage.clear_derived(session, user_id, [chat.id])
    await session.flush()
    return int(getattr(marked, "rowcount", 0) or 0)
