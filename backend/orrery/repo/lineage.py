"""Forgetting follows one lineage (issue 51): what a forgotten fact or chat leaves behind is found
from its source and removed, or marked so nothing reads it across chats, in the caller's transaction.

- **Messages.** Every turn that said or quoted a forgotten fact (its source message, and any message
  naming the fact's id, e.g. "It replaces [fact …]" or "Forgot [fact …]", or containing its text) is
  marked `forgotten_at`: it stays in its own chat, but recall, `search_memory`, digests and the pattern
  analyst skip it, and its search terms and vector are cleared so no index holds it. Clearing them
  moves the chat's `history_epoch` (a trigger), so every worker's cached copy is stale on its next turn.
- **Derived stores.** The digests and running summaries of the chats touched are deleted (a digest is
  queued to be rebuilt without what was forgotten), the learned summary is cleared and its rebuild
  queued when it drew on one of them, and every stored receipt of the person (the web inspector's last
  turn, which holds a whole prompt) is deleted.

Everything is read from the database on every turn, so nothing here touches a process's cache.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import String, and_, cast, delete, false, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from orrery.db.base import utcnow
from orrery.db.models import ChatDigest, ChatSession, Message, SessionSummary, TurnReceipt, UserSummary
from orrery.ops.jobs import enqueue_once

REFRESH_SUMMARY_JOB = "refresh_user_summary"
"""The pattern analyst's job (`orrery.agents.patterns`); its payload may leave out `model`."""
DIGEST_JOB = "chat_digest"
"""A chat's digest job (`orrery.memory.digests`)."""
JOB_ATTEMPTS = 5
OPENAI_TITLE = "openai: "
"""How the OpenAI-compatible door titles a chat from its first message (`api.openai_sessions`)."""
MIN_QUOTED_CHARS = 12
"""A fact's text is looked for in messages only from this length: a shorter one ("tea") would mark
every message that happens to contain the word."""


@dataclass(frozen=True)
class Said:
    """What locates a fact in the transcripts: its id, its text and where it was said."""

    id: uuid.UUID
    text: str
    session_id: uuid.UUID | None = None
    seq: int | None = None


async def forget_quotes(session: AsyncSession, user_id: uuid.UUID, facts: Sequence[Said]) -> set[uuid.UUID]:
    """Mark every turn of the person's that said or quoted one of `facts` forgotten, and clear what
    was derived from those chats; the chats touched."""
    if not facts:
        return set()
    hits = (
        await session.execute(
            select(Message.session_id, Message.seq)
            .join(ChatSession, ChatSession.id == Message.session_id)
            .where(ChatSession.user_id == user_id, or_(false(), *(_quotes(f) for f in facts)))
        )
    ).all()
    chats = await mark_turns(session, [(sid, seq) for sid, seq in hits])
    await clear_derived(session, user_id, chats)
    return chats


def _quotes(fact: Said) -> ColumnElement[bool]:
    """Where a message says or quotes `fact`: its source, its id, its text (when long enough)."""
    found: list[ColumnElement[bool]] = [
        Message.content.contains(str(fact.id), autoescape=True),
        cast(Message.tool_calls, String).contains(str(fact.id), autoescape=True),
    ]
    if len(fact.text) >= MIN_QUOTED_CHARS:
        found.append(func.lower(Message.content).contains(fact.text.lower(), autoescape=True))
    if fact.session_id is not None and fact.seq is not None:
        found.append(and_(Message.session_id == fact.session_id, Message.seq == fact.seq))
    return or_(*found)


async def mark_turns(session: AsyncSession, hits: Sequence[tuple[uuid.UUID, int]]) -> set[uuid.UUID]:
    """Mark the whole turn of each `(chat, seq)` forgotten (from the person's message that started it
    to the last reply before their next one), in two statements; the chats touched."""
    chats = {sid for sid, _ in hits}
    if not chats:
        return set()
    starts: dict[uuid.UUID, list[int]] = {}
    users = await session.execute(
        select(Message.session_id, Message.seq)
        .where(Message.session_id.in_(chats), Message.role == "user")
        .order_by(Message.seq)
    )
    for sid, seq in users.all():
        starts.setdefault(sid, []).append(seq)
    spans = [_turn(starts.get(sid, []), seq) for sid, seq in hits]
    ranges = [
        and_(Message.session_id == sid, Message.seq.between(lo, hi))
        for (sid, _), (lo, hi) in zip(hits, spans, strict=True)
    ]
    await session.execute(
        update(Message)
        .where(or_(false(), *ranges))
        .values(
            forgotten_at=func.coalesce(Message.forgotten_at, utcnow()),
            search_terms=None,
            embedding=None,
            embedding_model=None,
            embedding_dim=None,
        )
        .execution_options(synchronize_session=False)
    )
    await _untitle(session, [sid for (sid, _), (lo, _) in zip(hits, spans, strict=True) if lo <= 1])
    return chats


async def _untitle(session: AsyncSession, chats: Sequence[uuid.UUID]) -> None:
    """A chat whose title was taken from its first message (the CLI's and the OpenAI door's titles),
    now forgotten, loses that title: a title is shown to other chats (recall's labels, the timeline)."""
    if not chats:
        return
    firsts = await session.execute(
        select(ChatSession.id, ChatSession.title, Message.content)
        .join(Message, and_(Message.session_id == ChatSession.id, Message.seq == 1))
        .where(ChatSession.id.in_(set(chats)), ChatSession.title.is_not(None))
    )
    drawn = [cid for cid, title, content in firsts.all() if _drawn_from(title or "", content)]
    if drawn:
        await session.execute(
            update(ChatSession)
            .where(ChatSession.id.in_(drawn))
            .values(title=None)
            .execution_options(synchronize_session=False)
        )


def _drawn_from(title: str, content: str) -> bool:
    """Whether `title` is (the start of) `content`, as a title taken from a first message is."""
    core = " ".join(title.removeprefix(OPENAI_TITLE).rstrip(".…").split()).casefold()
    return bool(core) and " ".join(content.split()).casefold().startswith(core)


def _turn(user_seqs: Sequence[int], seq: int) -> tuple[int, int]:
    """The seqs of the turn holding `seq`: from the person's message at or before it to the message
    before their next one."""
    lo = max((s for s in user_seqs if s <= seq), default=seq)
    hi = min((s - 1 for s in user_seqs if s > seq), default=2**31 - 1)
    return lo, hi


async def clear_derived(session: AsyncSession, user_id: uuid.UUID, chats: Collection[uuid.UUID]) -> None:
    """Delete what was derived from `chats` (their digests, queued again, and running summaries),
    the person's stored receipts, and the learned summary when it drew on one of them."""
    await forget_receipts(session, user_id)
    if not chats:
        return
    ids = list(chats)
    mine = ChatDigest.user_id == user_id
    await session.execute(delete(ChatDigest).where(ChatDigest.chat_id.in_(ids), mine))
    await session.execute(delete(SessionSummary).where(SessionSummary.session_id.in_(ids)))
    remembered = await session.execute(
        select(ChatSession.id).where(
            ChatSession.id.in_(ids), ChatSession.user_id == user_id, ChatSession.remember.is_(True)
        )
    )
    for (chat_id,) in remembered.all():
        payload = {"chat_id": str(chat_id), "user_id": str(user_id)}
        await enqueue_once(session, DIGEST_JOB, payload, key=f"digest:{chat_id}", max_attempts=JOB_ATTEMPTS)
    await rebuild_summary(session, user_id, chats)


async def forget_receipts(session: AsyncSession, user_id: uuid.UUID) -> None:
    """Delete the person's stored receipts: each holds a whole prompt (recalled excerpts and facts)."""
    mine = select(ChatSession.id).where(ChatSession.user_id == user_id)
    await session.execute(
        delete(TurnReceipt)
        .where(TurnReceipt.session_id.in_(mine.scalar_subquery()))
        .execution_options(synchronize_session=False)
    )


async def rebuild_summary(session: AsyncSession, user_id: uuid.UUID, chats: Collection[uuid.UUID]) -> bool:
    """Clear the learned summary and queue its rebuild when it drew on one of `chats`; whether it did."""
    summary = await session.get(UserSummary, user_id)
    names = {str(c) for c in chats}
    if summary is None or not names & {str(s) for s in summary.source_sessions or []}:
        return False
    summary.patterns, summary.wins, summary.struggles, summary.source_sessions = [], [], [], []
    summary.updated_at = utcnow()
    await session.flush()
    payload = {"user_id": str(user_id)}
    key = f"summary:{user_id}"
    await enqueue_once(session, REFRESH_SUMMARY_JOB, payload, key=key, max_attempts=JOB_ATTEMPTS)
    return True
