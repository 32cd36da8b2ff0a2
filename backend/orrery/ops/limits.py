"""Per-user limits (turns per minute, tokens per UTC day), counted in the database so they hold
across every worker process. One row per user and period; an atomic upsert moves the window on.

A refused turn raises `RateLimitedError` inside the counting transaction, so nothing is counted or
stored for it.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlalchemy import case, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.db.base import conflict_insert, utcnow
from orrery.db.models import UsageCounter
from orrery.errors import RateLimitedError
from orrery.ops.metrics import ERRORS


def _day(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def _minute(now: datetime) -> datetime:
    return now.replace(second=0, microsecond=0)


async def _bump(s: AsyncSession, user_id: uuid.UUID, period: str, start: datetime, amount: int) -> int:
    """Add `amount` to the user's counter for the window starting at `start` (resetting an older
    window) and return the new count."""
    stmt = conflict_insert(s.get_bind().dialect.name, UsageCounter)
    stmt = stmt.values(user_id=user_id, period=period, window_start=start, count=amount)
    stmt = stmt.on_conflict_do_update(
        index_elements=[UsageCounter.user_id, UsageCounter.period],
        set_={
            "count": case(
                (UsageCounter.window_start == stmt.excluded.window_start, UsageCounter.count + amount),
                else_=amount,
            ),
            "window_start": stmt.excluded.window_start,
        },
    ).returning(UsageCounter.count)
    return int((await s.execute(stmt)).scalar_one())


async def _tokens_today(s: AsyncSession, user_id: uuid.UUID, day: datetime) -> int:
    used = await s.scalar(
        select(UsageCounter.count).where(
            UsageCounter.user_id == user_id, UsageCounter.period == "day", UsageCounter.window_start == day
        )
    )
    return int(used or 0)


async def reserve_turn(s: AsyncSession, settings: Settings, user_id: uuid.UUID) -> None:
    """Count one turn for the user in the caller's transaction (the one storing the turn's message),
    or refuse it (429 with `Retry-After`) when a limit is reached: raising rolls the count back."""
    if not settings.limit_turns_per_minute and not settings.limit_tokens_per_day:
        return
    try:
        await _reserve(s, settings, user_id)
    except RateLimitedError:
        ERRORS.labels(agent="-", kind="rate_limited").inc()
        raise


async def _reserve(s: AsyncSession, settings: Settings, user_id: uuid.UUID) -> None:
    now = utcnow()
    if settings.limit_tokens_per_day:
        day = _day(now)
        if await _tokens_today(s, user_id, day) >= settings.limit_tokens_per_day:
            wait = int((day + timedelta(days=1) - now).total_seconds()) + 1
            raise RateLimitedError(
                f"daily token limit of {settings.limit_tokens_per_day} reached; it resets at 00:00 UTC",
                retry_after=wait,
            )
    if settings.limit_turns_per_minute:
        count = await _bump(s, user_id, "minute", _minute(now), 1)
        if count > settings.limit_turns_per_minute:
            raise RateLimitedError(
                f"limit of {settings.limit_turns_per_minute} turns per minute reached",
                retry_after=60 - now.second,
            )


async def count_tokens(s: AsyncSession, settings: Settings, user_id: uuid.UUID, tokens: int) -> None:
    """Add a stored reply's tokens to today's count, in the transaction that stores the reply."""
    if settings.limit_tokens_per_day and tokens:
        await _bump(s, user_id, "day", _day(utcnow()), tokens)
