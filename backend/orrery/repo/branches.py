"""Branching a chat at an earlier reply, as OpenAI's `previous_response_id` does: the next turn
continues from that reply, and what came after it (the abandoned branch) is dropped, as the AI
SDK's regenerate drops a reply (`chat.rewind_to_user_message`), so the model and the chat's history
see one chain."""

from __future__ import annotations

import uuid

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import Message, SessionSummary
from orrery.repo.chat import get_session


async def branch_after(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID, reply_id: uuid.UUID
) -> int:
    """Drop the session's messages after its reply `reply_id` (and a summary past it); how many went.
    A reply that is not in the caller's session (a replayed turn's id) branches nothing."""
    record = await get_session(session, user_id, session_id)
    seq = (
        await session.execute(
            select(Message.seq).where(
                Message.session_id == record.id, Message.id == reply_id, Message.role == "assistant"
            )
        )
    ).scalar_one_or_none()
    if seq is None or seq >= record.message_count:
        return 0
    dropped = record.message_count - seq
    await session.execute(delete(Message).where(Message.session_id == record.id, Message.seq > seq))
    await session.execute(
        delete(SessionSummary).where(
            SessionSummary.session_id == record.id, SessionSummary.covered_through_seq > seq
        )
    )
    record.message_count = seq
    return dropped
