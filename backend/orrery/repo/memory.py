"""Check-ins and the learned user summary (patterns, wins, struggles)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.models import CheckIn, UserSummary
from orrery.errors import ValidationError
from orrery.repo.graph import get_entity
from orrery.repo.identity import get_user
from orrery.repo.scope import require_project


async def add_check_in(
    session: AsyncSession,
    user_id: uuid.UUID,
    *,
    note: str | None = None,
    mood: int | None = None,
    project_id: uuid.UUID | None = None,
    goal_id: uuid.UUID | None = None,
    at: datetime | None = None,
) -> CheckIn:
    """Record that the person showed up; project and goal must be visible to them."""
    if mood is not None and not 1 <= mood <= 5:
        raise ValidationError("mood must be between 1 and 5")
    await get_user(session, user_id)
    if project_id is not None:
        await require_project(session, user_id, project_id)
    if goal_id is not None:
        goal = await get_entity(session, user_id, goal_id)
        if goal.kind != "goal":
            raise ValidationError(f"entity {str(goal_id)!r} is a {goal.kind}, not a goal")
    check_in = CheckIn(
        user_id=user_id,
        project_id=project_id,
        goal_id=goal_id,
        note=note,
        mood=mood,
        created_at=at or utcnow(),
    )
    session.add(check_in)
    await session.flush()
    return check_in


async def recent_check_ins(session: AsyncSession, user_id: uuid.UUID, limit: int = 10) -> Sequence[CheckIn]:
    """The user's latest check-ins, newest first."""
    result = await session.execute(
        select(CheckIn).where(CheckIn.user_id == user_id).order_by(CheckIn.created_at.desc()).limit(limit)
    )
    return result.scalars().all()


async def save_user_summary(
    session: AsyncSession,
    user_id: uuid.UUID,
    *,
    patterns: list[str],
    wins: list[str],
    struggles: list[str],
    source_sessions: list[str] | None = None,
) -> UserSummary:
    """Create or replace the user's summary; `source_sessions` (the chats it drew on, ids as
    strings) replaces the stored list when given."""
    await get_user(session, user_id)
    for label, items in (("patterns", patterns), ("wins", wins), ("struggles", struggles)):
        if not all(isinstance(i, str) and i.strip() for i in items):
            raise ValidationError(f"{label} must be a list of non-empty strings")
    summary = await session.get(UserSummary, user_id)
    if summary is None:
        summary = UserSummary(user_id=user_id)
        session.add(summary)
    summary.patterns, summary.wins, summary.struggles = list(patterns), list(wins), list(struggles)
    if source_sessions is not None:
        summary.source_sessions = [str(s) for s in source_sessions]
    summary.updated_at = utcnow()
    await session.flush()
    return summary


async def get_user_summary(session: AsyncSession, user_id: uuid.UUID) -> UserSummary | None:
    """The user's summary, or None when nothing has been learned yet."""
    return await session.get(UserSummary, user_id)
