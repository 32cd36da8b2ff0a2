"""Reading a session's messages for scoping: each call is exactly one query."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.db.models import Message
from backend.memory.scoping.base import HistoryMessage


def _view(m: Message) -> HistoryMessage:
    return HistoryMessage(
        seq=m.seq,
        role=m.role,
        content=m.content,
        agent_id=m.agent_id,
        created_at=m.created_at,
        has_tool_calls=bool(m.tool_calls),
    )


class DbHistory:
    """A `HistorySource` over `messages` of one (already authorized) session."""

    def __init__(self, session: AsyncSession, session_id: uuid.UUID, latest_seq: int) -> None:
        self.session = session
        self.session_id = session_id
        self.latest_seq = latest_seq
        self.queries = 0

    async def recent(self, limit: int) -> list[HistoryMessage]:
        """The newest `limit` messages, oldest first."""
        if limit <= 0 or self.latest_seq == 0:
            return []
        return await self._fetch(Message.seq > self.latest_seq - limit, Message.seq <= self.latest_seq)

    async def between(self, after_seq: int, through_seq: int) -> list[HistoryMessage]:
        """Messages with `after_seq < seq <= through_seq`, oldest first."""
        if through_seq <= after_seq:
            return []
        return await self._fetch(Message.seq > after_seq, Message.seq <= through_seq)

    async def _fetch(self, *conditions: object) -> list[HistoryMessage]:
        self.queries += 1
        rows = await self.session.execute(
            select(Message).where(Message.session_id == self.session_id, *conditions).order_by(Message.seq)  # type: ignore[arg-type]
        )
        return [_view(m) for m in rows.scalars()]
