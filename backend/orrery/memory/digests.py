"""Each chat's dated digest (`chat_digests`), built once the chat goes quiet, by a durable job.

A finished turn queues `DIGEST_JOB` for its chat, keyed by the chat (`enqueue_once`: one pending
job per chat across every worker) and not due before `digest_quiet_minutes` from then. When it runs
(`digest_chat`, any worker), a chat that got a message since is not quiet: the job is put back
(`RunLater`) for its last message plus the quiet time. A quiet chat whose digest matches it (same
`message_count` and `history_epoch`) is left as it is; otherwise the digest is (re)built, by the
model when a writer is given (its cost kept in the row), else extractively (`digest_text`), and the
extractive one stands in when the model fails.

It reads what recall may read: the chat's messages, never superseded, failed or forgotten ones, and only while
the chat is remembered; a chat not remembered (or gone) has its digest deleted instead. The same
function builds the evaluation's digests (`orrery eval memory`), so it measures what runs.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import ChatDigest, ChatSession, Message
from orrery.memory.digest_text import Rarity, Said, cap_for, extractive_digest
from orrery.memory.history import LIVE
from orrery.ops.jobs import RunLater, enqueue_once
from orrery.repo.sessions import DIGEST_JOB

__all__ = ["DIGEST_JOB", "digest_all", "digest_chat", "queue_digest"]

NOT_FORGOTTEN = Message.forgotten_at.is_(None)
"""A digest never reads a turn that said or quoted a forgotten fact (`orrery.repo.lineage`)."""

log = logging.getLogger("orrery.digests")
RARITY_MESSAGES = 2000
"""Rarity is counted over the person's latest this many messages (each up to `RARITY_CHARS`)."""
RARITY_CHARS = 2000


@dataclass(frozen=True)
class Written:
    """A digest the model wrote: its text, the model and what it cost (None: no price known)."""

    text: str
    model: str
    cost_usd: float | None


@dataclass(frozen=True)
class ChatToDigest:
    """What a writer is given: the chat's title and its messages in order, and the token cap."""

    title: str | None
    messages: Sequence[Said]
    cap: int


DigestWriter = Callable[[ChatToDigest], Awaitable[Written]]
Outcome = Literal["built", "fresh", "removed", "later"]


async def queue_digest(
    session: AsyncSession, settings: Settings, user_id: uuid.UUID, chat_id: uuid.UUID, now: datetime
) -> bool:
    """Queue the chat's digest for when it may be quiet (one statement); whether it was added (a
    pending one already covers it: it re-checks when it runs)."""
    return await enqueue_once(
        session,
        DIGEST_JOB,
        {"chat_id": str(chat_id), "user_id": str(user_id)},
        key=f"digest:{chat_id}",
        max_attempts=settings.jobs_max_attempts,
        run_after=now + timedelta(minutes=settings.digest_quiet_minutes),
    )


async def digest_chat(
    db: Database,
    chat_id: uuid.UUID,
    *,
    now: datetime,
    quiet: timedelta = timedelta(0),
    writer: DigestWriter | None = None,
) -> Outcome:
    """The job's work for one chat (see the module): raises `RunLater` while the chat is not quiet."""
    async with db.sessions() as s:
        chat = await s.get(ChatSession, chat_id)
        if chat is None or not chat.remember:
            await s.execute(delete(ChatDigest).where(ChatDigest.chat_id == chat_id))
            await s.commit()
            return "removed"
        last = await _last_message_at(s, chat_id)
        if last is not None and now - _aware(last, now) < quiet:
            raise RunLater(_aware(last, now) + quiet)
        stamp = (chat.message_count, chat.history_epoch)
        current = await s.get(ChatDigest, chat_id)
        if current is not None and (current.message_count, current.history_epoch) == stamp:
            return "fresh"
        messages = await _messages(s, chat_id)
        rarity = Rarity(await _person_texts(s, chat.user_id))
        user_id, title = chat.user_id, chat.title
    text, written = await _write(ChatToDigest(title, messages, cap_for(messages)), rarity, writer)
    async with db.transaction() as s:
        await _save(s, chat_id, user_id, text, written, stamp, messages)
    return "built"


async def _write(
    chat: ChatToDigest, rarity: Rarity, writer: DigestWriter | None
) -> tuple[str, Written | None]:
    """The model's digest when a writer is given and it works, else the extractive one."""
    if writer is not None and chat.messages:
        try:
            written = await writer(chat)
            if written.text.strip():
                return written.text.strip(), written
        except Exception:  # a model down or a bad answer: the extractive digest stands in
            log.warning("digest writer failed; using the extractive digest", exc_info=True)
    return extractive_digest(chat.messages, rarity, chat.cap), None


async def _save(
    s: AsyncSession,
    chat_id: uuid.UUID,
    user_id: uuid.UUID,
    text: str,
    written: Written | None,
    stamp: tuple[int, int],
    messages: Sequence[Said],
) -> None:
    """Insert or replace the row, unless the chat went (or stopped being remembered) meanwhile."""
    chat = await s.get(ChatSession, chat_id)
    if chat is None or not chat.remember:
        return
    row = await s.get(ChatDigest, chat_id) or ChatDigest(chat_id=chat_id, user_id=user_id)
    row.text = text
    row.source = "model" if written else "extractive"
    row.model = written.model if written else None
    row.cost_usd = written.cost_usd if written else None
    row.message_count, row.history_epoch = stamp
    dates = [m.created_at for m in messages if m.created_at is not None]
    row.first_at, row.last_at = (min(dates), max(dates)) if dates else (chat.created_at, chat.created_at)
    s.add(row)


def _aware(at: datetime, like: datetime) -> datetime:
    """SQLite gives naive UTC datetimes: compare them as UTC."""
    return at.replace(tzinfo=like.tzinfo) if at.tzinfo is None and like.tzinfo is not None else at


async def _last_message_at(s: AsyncSession, chat_id: uuid.UUID) -> datetime | None:
    stmt = select(func.max(Message.created_at)).where(Message.session_id == chat_id)
    result: datetime | None = (await s.execute(stmt)).scalar_one_or_none()
    return result


async def _messages(s: AsyncSession, chat_id: uuid.UUID) -> list[Said]:
    """The chat's messages recall may read, in order."""
    rows = await s.execute(
        select(Message.role, Message.content, Message.created_at)
        .where(Message.session_id == chat_id, LIVE, Message.status != "failed", NOT_FORGOTTEN)
        .where(Message.role.in_(("user", "assistant")))
        .order_by(Message.seq)
    )
    return [Said(role, content or "", at) for role, content, at in rows.all()]


async def _person_texts(s: AsyncSession, user_id: uuid.UUID) -> list[str]:
    """The person's latest messages in the chats they keep: what rarity is measured over."""
    rows = await s.execute(
        select(func.substr(Message.content, 1, RARITY_CHARS))
        .join(ChatSession, ChatSession.id == Message.session_id)
        .where(ChatSession.user_id == user_id, ChatSession.remember.is_(True), LIVE, NOT_FORGOTTEN)
        .order_by(Message.created_at.desc())
        .limit(RARITY_MESSAGES)
    )
    return [text or "" for (text,) in rows.all()]


async def digest_all(db: Database, chat_ids: Sequence[uuid.UUID], now: datetime) -> None:
    """Every chat's digest as the job builds it, quiet or not (the evaluation's stored chats)."""
    for chat_id in chat_ids:
        await digest_chat(db, chat_id, now=now)
