"""A user's model usage: tokens and cost of their assistant replies, summed by UTC day and agent."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.models import ChatSession, Message


@dataclass(frozen=True)
class UsageRow:
    """One day and agent."""

    day: date
    agent: str | None
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """Sum over priced replies; `None` when none of them had a price (offline)."""


def _utc_day(session: AsyncSession) -> Any:
    if session.get_bind().dialect.name == "postgresql":
        return func.date(func.timezone("UTC", Message.created_at))
    return func.date(Message.created_at)  # SQLite stores UTC without an offset


async def usage_by_day(session: AsyncSession, user_id: uuid.UUID, days: int = 30) -> list[UsageRow]:
    """The last `days` UTC days (today included), newest first, one row per day and agent."""
    since = utcnow().replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=days - 1)
    day = _utc_day(session).label("day")
    rows = await session.execute(
        select(
            day,
            Message.agent_id,
            func.count(),
            func.coalesce(func.sum(Message.prompt_tokens), 0),
            func.coalesce(func.sum(Message.completion_tokens), 0),
            func.sum(Message.cost_usd),
        )
        .join(ChatSession, ChatSession.id == Message.session_id)
        .where(ChatSession.user_id == user_id, Message.role == "assistant", Message.created_at >= since)
        .group_by(day, Message.agent_id)
        .order_by(day.desc(), Message.agent_id)
    )
    return [
        UsageRow(
            day=d if isinstance(d, date) else date.fromisoformat(str(d)),
            agent=agent,
            turns=int(turns),
            input_tokens=int(tin),
            output_tokens=int(tout),
            cost_usd=float(cost) if cost is not None else None,
        )
        for d, agent, turns, tin, tout, cost in rows.all()
    ]
