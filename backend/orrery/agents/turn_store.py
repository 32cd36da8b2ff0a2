"""The turn's writes around the model call, each in its own short transaction.

Rules (docs/operations/guarantees.md): a refused turn stores nothing (unknown agent, deleted focus,
empty text are checked before the insert); an Idempotency-Key is bound to a fingerprint of its request,
so a reused key with another body is a 409, and a repeat of an answered request replays the stored
reply; a failed turn marks its user message `failed`, and it can be retried (same key, or
`message=None`) while it is the latest message; once the conversation moved on it is shown to the model
as unanswered instead. A turn whose process died (`kill -9`) left its message `complete` and unanswered:
the next turn, holding the session's turn lock (so no live process owns that message), marks it `failed`
first.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any, TypeGuard

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.agents.arrivals import Arrival, moved_on, twin_of
from orrery.config import Settings
from orrery.db.base import utcnow
from orrery.db.engine import Database
from orrery.db.memos import Memo, write_memos
from orrery.db.models import ChatSession, CheckIn, Entity, Message
from orrery.deps import HandoffRequest
from orrery.errors import ConflictError, ValidationError
from orrery.memory.embedding_models import LOCAL, EmbeddingModel
from orrery.memory.messages import append_message, states_standing
from orrery.ops.limits import count_tokens, reserve_turn
from orrery.repo import chat
from orrery.repo.lineage import mark_turns

log = logging.getLogger("orrery.turns")
MAX_MESSAGE_CHARS = 20_000
MARK_FAILED_RETRIES = (0.2, 1.0)
"""Pauses between the attempts to mark a failed turn's message (an outage may be brief)."""


def request_fingerprint(message: str | None, agent: str | None) -> str:
    """SHA-256 of what a turn request asks for (the text and the chosen agent)."""
    body = json.dumps({"message": message, "agent": agent}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()


@dataclass(frozen=True)
class PendingTurn:
    """The user message a turn answers, or the stored reply when the request is a replay, or
    `shared_failure`: the same request ran while this one waited, and its turn failed. A turn to run
    also carries what the store read, so the context is assembled without reading it again: the
    session row (`message_count` counts the message), the focused entity, whether the message was
    stored before (`retried`: its reply clears a `failed` mark) and whether any user message of the
    session is marked `failed`."""

    text: str
    message_id: uuid.UUID | None
    replay: Message | None = None
    shared_failure: bool = False
    chat: ChatSession | None = None
    focus: Entity | None = None
    retried: bool = False
    any_failed: bool = False
    reply_id: uuid.UUID | None = None
    """The id the reply will be stored under, when the door announced one before the run."""


BeforeStore = Callable[[AsyncSession], Awaitable[object]]
"""A write that must commit with the user message or not at all (an edit's supersede)."""


async def store_user_message(
    db: Database,
    settings: Settings,
    user_id: uuid.UUID,
    sid: uuid.UUID,
    message: str | None,
    client_key: str | None,
    fingerprint: str | None,
    reads: AsyncSession,
    embedding: EmbeddingModel = LOCAL,
    arrival: Arrival = Arrival(),  # noqa: B008 - frozen
    before_store: BeforeStore | None = None,
) -> PendingTurn:
    """Store the user message (or find the one to retry, or the reply to replay), counting the turn
    against the user's limits in the same transaction; a remote `embedding` model gets a job queued
    with it, never a call here. Runs under the turn lock. `reads`: the turn's read
    session, outside any transaction, in which a message that is the only write is stored by its
    one statement (the turn then reads its context there: one connection checkout fewer).
    `before_store` writes first in the same transaction: a refusal rolls both back."""
    if before_store is None and _alone(settings, message, client_key, arrival, embedding):
        stored = await _store_alone(reads, user_id, sid, message, embedding, arrival)
        if stored is not None:
            return stored
    async with db.transaction() as s:
        if before_store is not None:
            await before_store(s)
        state = await chat.session_and_latest(s, user_id, sid)  # a deleted focus is refused here
        record, latest = state.chat, state.latest
        await reserve_turn(s, settings, user_id)  # 429 rolls this transaction back: nothing stored
        leftover = None
        if _is_leftover(latest):
            latest.status = "failed"  # we hold the lock, so its turn has no live owner
            leftover = latest.id
        found = await _earlier(s, sid, latest, message, client_key, fingerprint, arrival, leftover)
        if found is None:
            found = await _new_or_latest(s, user_id, sid, latest, message, client_key, fingerprint, embedding)
    if found.replay is not None or found.shared_failure:
        return found
    return replace(found, chat=record, focus=state.focus, any_failed=state.any_failed or leftover is not None)


def _alone(
    settings: Settings,
    message: str | None,
    client_key: str | None,
    arrival: Arrival,
    embedding: EmbeddingModel,
) -> bool:
    """Whether storing the message may write nothing but the message: a new message with no key
    to look up, no limits to count, no embedding job and no standing instruction to store with it."""
    limits = settings.limit_turns_per_minute or settings.limit_tokens_per_day
    plain = message is not None and client_key is None and arrival.message_id is None
    standing = message is not None and states_standing("user", message.strip())  # a fact too: a transaction
    return plain and not limits and not embedding.remote and not standing


async def _store_alone(
    s: AsyncSession,
    user_id: uuid.UUID,
    sid: uuid.UUID,
    message: str | None,
    embedding: EmbeddingModel,
    arrival: Arrival,
) -> PendingTurn | None:
    """The message stored by its one statement in `s` (outside any transaction), after reading the
    session (under the turn lock nothing else changes its messages); None when the latest message
    is a crash leftover, whose mark must commit with the message, or when a resend's session moved
    on while it waited (the transaction's path looks for its twin)."""
    state = await chat.session_and_latest(s, user_id, sid)  # a deleted focus is refused here
    if _is_leftover(state.latest) or moved_on(arrival, state.latest):
        await s.close()  # forget what it read: the transaction reads it again
        return None
    found = await _new_or_latest(s, user_id, sid, state.latest, message, None, None, embedding)
    return replace(found, chat=state.chat, focus=state.focus, any_failed=state.any_failed)


def _is_leftover(latest: Message | None) -> TypeGuard[Message]:
    """Whether the session's latest message is a crash leftover: a user message still `complete`
    with no reply, seen while this process holds the session's turn lock."""
    return latest is not None and latest.role == "user" and latest.status == "complete"


async def _earlier(
    s: AsyncSession,
    sid: uuid.UUID,
    latest: Message | None,
    message: str | None,
    client_key: str | None,
    fingerprint: str | None,
    arrival: Arrival,
    leftover: uuid.UUID | None,
) -> PendingTurn | None:
    """The stored turn this request repeats (by Idempotency-Key, the resend found on arrival, or its
    twin stored while it waited): its reply to replay, its failure to share, or its message to
    retry; None to store anew."""
    earlier = None
    if client_key is not None:
        earlier = (
            await s.execute(
                select(Message).where(Message.session_id == sid, Message.client_key == client_key)
            )
        ).scalar_one_or_none()
    elif arrival.message_id is not None:
        earlier = await s.get(Message, arrival.message_id)
    elif moved_on(arrival, latest) and message is not None:
        earlier = await twin_of(s, sid, arrival, message)
    if earlier is None or earlier.session_id != sid:
        return None
    duplicate = earlier.status == "failed" and not arrival.failed and earlier.id != leftover
    return await _replay_or_retry(s, earlier, latest, fingerprint, duplicate, client_key is not None)


async def _new_or_latest(
    s: AsyncSession,
    user_id: uuid.UUID,
    sid: uuid.UUID,
    latest: Message | None,
    message: str | None,
    client_key: str | None,
    fingerprint: str | None,
    embedding: EmbeddingModel,
) -> PendingTurn:
    """`message` stored as the session's next message, or (None) the unanswered latest to retry."""
    if message is None:
        if latest is None or latest.role != "user":
            raise ValidationError("nothing to retry: the last message is not an unanswered user message")
        return PendingTurn(latest.content, latest.id, retried=True)
    text = checked_message(message)
    new = chat.NewMessage("user", text, client_key=client_key, request_fingerprint=fingerprint)
    saved = await append_message(s, user_id, sid, new, embedding=embedding)
    return PendingTurn(text, saved.id)


def checked_message(message: str) -> str:
    """The message as it is stored (stripped), or the refusal every door gives before storing
    anything (a door that creates a session first checks here before creating it)."""
    text = message.strip()
    if not text:
        raise ValidationError("message must not be empty")
    if len(text) > MAX_MESSAGE_CHARS:
        raise ValidationError(f"message is longer than {MAX_MESSAGE_CHARS} characters")
    return text


async def _replay_or_retry(
    s: AsyncSession,
    earlier: Message,
    latest: Message | None,
    fingerprint: str | None,
    duplicate: bool,
    keyed: bool,
) -> PendingTurn | None:
    """The stored reply to replay, the failure to share (`duplicate`: it failed while this request
    waited), or the message to retry; None when an unkeyed resend's turn was overtaken (store anew)."""
    if fingerprint and earlier.request_fingerprint and earlier.request_fingerprint != fingerprint:
        raise ConflictError("this Idempotency-Key was already used for a different request")
    reply = (
        await s.execute(
            select(Message).where(
                Message.session_id == earlier.session_id,
                Message.seq == earlier.seq + 1,
                Message.role == "assistant",
            )
        )
    ).scalar_one_or_none()
    if reply is not None:
        return PendingTurn(earlier.content, earlier.id, reply)
    if latest is None or latest.id != earlier.id:
        if not keyed:
            return None
        raise ConflictError(
            "the turn of this Idempotency-Key failed and the conversation has moved on; "
            "send the message again with a new key"
        )
    return PendingTurn(earlier.content, earlier.id, shared_failure=duplicate, retried=True)


async def mark_failed(db: Database, message_id: uuid.UUID | None) -> None:
    """Mark a user message whose turn failed, retrying briefly (the database may be what failed).
    If it still cannot, the message stays an unanswered `complete` one: the session's next turn (or
    read of its context) finds it with a free turn lock and treats it as failed all the same."""
    if message_id is None:
        return
    for attempt, pause in enumerate((*MARK_FAILED_RETRIES, None)):
        try:
            async with db.transaction() as s:
                await s.execute(update(Message).where(Message.id == message_id).values(status="failed"))
            return
        except Exception:
            if pause is None:
                log.warning(
                    "could not mark message %s as failed after %d attempts; the session's next turn marks it",
                    message_id,
                    attempt + 1,
                    exc_info=True,
                )
                return
            await asyncio.sleep(pause)


async def mark_answered(s: AsyncSession, message_id: uuid.UUID | None) -> None:
    """A retried message that now has its reply is no longer `failed` (inside the reply's transaction)."""
    if message_id is not None:
        await s.execute(
            update(Message)
            .where(Message.id == message_id, Message.status == "failed")
            .values(status="complete")
        )


@dataclass(frozen=True)
class StoredReply:
    """The assistant message a finished run stores, with its usage, cost and the model that answered."""

    agent_id: str
    text: str
    calls: list[dict[str, Any]]
    usage: Any
    latency: int
    truncated: bool
    cost: float | None
    id: uuid.UUID | None = None
    model: str | None = None


async def persist_reply(
    db: Database,
    settings: Settings,
    embedding: EmbeddingModel,
    user_id: uuid.UUID,
    sid: uuid.UUID,
    answered: uuid.UUID | None,
    reply: StoredReply,
    handoff: HandoffRequest,
    memos: list[Memo] | None = None,
) -> Message:
    """The reply, the answered mark, what assembling the turn's context left to write (`memos`),
    token usage, a handoff and the day's check-in: one transaction. When the reply is the only
    write (the usual turn), it is one statement, which needs no transaction around it."""
    usage, today = reply.usage, _today()
    switched = handoff.to if handoff.to != reply.agent_id else None  # the agent the model handed to
    checked_in = _CHECKED_IN.get(user_id) == today.date()
    forgot = any(c.get("name") == "forget_fact" and not c.get("error") for c in reply.calls)
    busy = memos or answered or switched or settings.limit_tokens_per_day or embedding.remote
    alone = not (busy or not checked_in or forgot)
    async with db.statement() if alone else db.transaction() as s:
        await write_memos(s, memos or [])
        await mark_answered(s, answered)
        saved = await append_message(
            s,
            user_id,
            sid,
            chat.NewMessage(
                "assistant",
                reply.text,
                agent_id=reply.agent_id,
                tool_calls=reply.calls or None,
                prompt_tokens=usage.input_tokens,
                completion_tokens=usage.output_tokens,
                token_count=usage.output_tokens,
                latency_ms=reply.latency,
                status="truncated" if reply.truncated else "complete",
                cost_usd=reply.cost,
                model=reply.model,
                id=reply.id,
            ),
            embedding=embedding,
        )
        if forgot:  # the turn that forgot a fact quotes it: forgotten with it, stored after the tool ran
            await mark_turns(s, [(sid, saved.seq)])
        await count_tokens(s, settings, user_id, (usage.input_tokens or 0) + (usage.output_tokens or 0))
        if switched:
            await chat.record_transition(s, user_id, sid, switched, handoff.reason, saved.id)
        if not checked_in:
            await _check_in_today(s, user_id, sid, today)
    if len(_CHECKED_IN) >= CHECKED_IN_MAX_USERS:
        _CHECKED_IN.clear()  # forgetting costs one lookup per user: the database stays the record
    _CHECKED_IN[user_id] = today.date()  # remembered once it is committed
    return saved


_CHECKED_IN: dict[uuid.UUID, date] = {}
"""Users this process saw checked in, with the day: a later turn that day skips the lookup (an
older day just fails the comparison). The database stays the record (another process's check-in is
found by its own lookup)."""
CHECKED_IN_MAX_USERS = 50_000


def _today() -> datetime:
    """The start of today (UTC)."""
    return utcnow().replace(hour=0, minute=0, second=0, microsecond=0)


async def _check_in_today(s: Any, user_id: uuid.UUID, sid: uuid.UUID, start: datetime) -> None:
    """Engagement: one check-in per day of chat activity (`start`: the day's first instant)."""
    from orrery.repo.memory import add_check_in

    today = (
        await s.execute(
            select(func.count())
            .select_from(CheckIn)
            .where(CheckIn.user_id == user_id, CheckIn.created_at >= start)
        )
    ).scalar_one()
    if not today:
        record = await chat.get_session(s, user_id, sid)
        await add_check_in(s, user_id, note="chatted with Orrery", project_id=record.project_id)
