"""What a turn request found when it arrived, before it waited for the session's turn lock: the
stored turn it repeats (by Idempotency-Key, or a resend's unanswered latest message), or, for a
resend that found none, how far the session had got. A twin stored while it waited is then the
same request sent twice at once (by one client, or by clients of two processes): the turn lock is
the database's on PostgreSQL, so this holds across processes."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.engine import Database
from orrery.db.models import Message


@dataclass(frozen=True)
class Arrival:
    """What a request repeating a stored turn found before it waited for the session's turn lock:
    that user message (if stored yet), and whether it had already failed then (a retry) or not (a
    duplicate of a turn in flight, which shares that turn's outcome instead of running the model).
    A resend that found no such message keeps the session's latest `seq` then (`seen_seq`): a
    message of its text stored after it while it waited for the lock is the same request, sent
    twice at once (by one client, or by two processes' clients), and its outcome is shared too."""

    message_id: uuid.UUID | None = None
    failed: bool = False
    seen_seq: int | None = None


async def arrival_of(db: Database, sid: uuid.UUID, client_key: str | None, resend: str | None) -> Arrival:
    """Before the lock: the message of `client_key`, or (`resend`, a door that resends the whole
    conversation) the session's latest message when it is that same text, still unanswered; a
    resend that found none keeps the latest `seq` (0: no messages yet) to look for its twin by."""
    if client_key is None and resend is None:
        return Arrival()
    async with db.sessions() as s:
        if client_key is not None:
            query = select(Message).where(Message.session_id == sid, Message.client_key == client_key)
        else:
            query = select(Message).where(Message.session_id == sid).order_by(Message.seq.desc()).limit(1)
        found = (await s.execute(query)).scalar_one_or_none()
    if client_key is None and (
        found is None or found.role != "user" or found.content != (resend or "").strip()
    ):
        return Arrival(seen_seq=found.seq if found is not None else 0)
    if found is None:
        return Arrival()
    return Arrival(found.id, found.status == "failed")


def moved_on(arrival: Arrival, latest: Message | None) -> bool:
    """Whether messages were stored since a resend arrived (a twin of it may have run meanwhile)."""
    return arrival.seen_seq is not None and latest is not None and latest.seq > arrival.seen_seq


async def twin_of(s: AsyncSession, sid: uuid.UUID, arrival: Arrival, message: str) -> Message | None:
    """The first user message of `message`'s text stored after the resend arrived (`seen_seq`)."""
    query = (
        select(Message)
        .where(
            Message.session_id == sid,
            Message.seq > (arrival.seen_seq or 0),
            Message.role == "user",
            Message.content == message.strip(),
            Message.superseded_at.is_(None),
        )
        .order_by(Message.seq)
        .limit(1)
    )
    return (await s.execute(query)).scalar_one_or_none()
