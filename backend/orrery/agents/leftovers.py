"""A turn cut off by a crash (`kill -9`, a lost machine) left its user message `complete` with no
reply. The session's next turn marks it `failed` (`turn_store`); a session that is never resumed
has it marked when it is read: once no live process holds the session's turn lock (a lock dies with
its process), the message is marked `failed` by one conditional statement, so a read shows what
happened and clients offer a retry."""

from __future__ import annotations

import uuid

from sqlalchemy import exists, select, update

from orrery.agents.turn_lock import TurnLocks
from orrery.db.engine import Database
from orrery.db.models import Message


def may_be_leftover(message: Message, message_count: int) -> bool:
    """Whether `message` (as read) is the session's latest, a user message still `complete`: a
    crash leftover unless a live turn owns it. Costs nothing: no lock or database is asked."""
    return message.seq == message_count and message.role == "user" and message.status == "complete"


async def settle_leftover(db: Database, locks: TurnLocks, session_id: uuid.UUID, message: Message) -> bool:
    """Mark `message` failed if it is a crash leftover (see `may_be_leftover`) whose turn has no live
    owner; whether it was marked. The statement marks it only while it is still `complete` and
    still the latest message, so a turn that started or answered meanwhile is never overruled."""
    if await locks.live(session_id):
        return False
    later = exists(select(Message.id).where(Message.session_id == session_id, Message.seq > message.seq))
    async with db.transaction() as s:
        marked = await s.execute(
            update(Message)
            .where(Message.id == message.id, Message.status == "complete", ~later)
            .values(status="failed")
        )
    return bool(getattr(marked, "rowcount", 0))
