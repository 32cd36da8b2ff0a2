"""The turn's writes around the model call, each in its own short transaction.

Rules (README "Turn rules"): a refused turn stores nothing (unknown agent, deleted focus, empty text are
checked before the insert); an Idempotency-Key is bound to a fingerprint of its request, so a reused key
with another body is a 409, and a repeat of an answered request replays the stored reply; a failed turn
marks its user message `failed`, and it can be retried (same key, or `message=None`) while it is the
latest message; once the conversation moved on it is shown to the model as unanswered instead.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from backend.db.engine import Database
from backend.db.models import Message
from backend.errors import ConflictError, ValidationError
from backend.memory.embedding_models import LOCAL, EmbeddingModel
from backend.repo import chat

log = logging.getLogger("orrery.turns")
MAX_MESSAGE_CHARS = 20_000


def request_fingerprint(message: str | None, agent: str | None) -> str:
    """SHA-256 of what a turn request asks for (the text and the chosen agent)."""
    body = json.dumps({"message": message, "agent": agent}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()


@dataclass(frozen=True)
class PendingTurn:
    """The user message a turn answers, or the stored reply when the request is a replay."""

    text: str
    message_id: uuid.UUID | None
    replay: Message | None = None


async def store_user_message(
    db: Database,
    user_id: uuid.UUID,
    sid: uuid.UUID,
    message: str | None,
    client_key: str | None,
    fingerprint: str | None,
    embedding: EmbeddingModel = LOCAL,
) -> PendingTurn:
    """Store the user message (or find the one to retry, or the reply to replay); a remote
    `embedding` model gets a job queued with it, never a call here."""
    async with db.transaction() as s:
        record = await chat.get_session(s, user_id, sid)
        if record.focus_kind and record.project_id and record.focus_id:
            await chat.check_focus(s, user_id, record.project_id, record.focus_kind, record.focus_id)
        latest = (
            await s.execute(
                select(Message).where(Message.session_id == sid).order_by(Message.seq.desc()).limit(1)
            )
        ).scalar_one_or_none()
        if client_key is not None:
            earlier = (
                await s.execute(
                    select(Message).where(Message.session_id == sid, Message.client_key == client_key)
                )
            ).scalar_one_or_none()
            if earlier is not None:
                return await _replay_or_retry(s, earlier, latest, fingerprint)
        if message is None:
            if latest is None or latest.role != "user":
                raise ValidationError("nothing to retry: the last message is not an unanswered user message")
            return PendingTurn(latest.content, latest.id)
        text = message.strip()
        if not text:
            raise ValidationError("message must not be empty")
        if len(text) > MAX_MESSAGE_CHARS:
            raise ValidationError(f"message is longer than {MAX_MESSAGE_CHARS} characters")
        saved = await chat.append_message(
            s,
            user_id,
            sid,
            chat.NewMessage("user", text, client_key=client_key, request_fingerprint=fingerprint),
            embedding=embedding,
        )
        return PendingTurn(text, saved.id)


async def _replay_or_retry(
    s: AsyncSession, earlier: Message, latest: Message | None, fingerprint: str | None
) -> PendingTurn:
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
        raise ConflictError(
            "the turn of this Idempotency-Key failed and the conversation has moved on; "
            "send the message again with a new key"
        )
    return PendingTurn(earlier.content, earlier.id)


async def mark_failed(db: Database, message_id: uuid.UUID | None) -> None:
    """Mark a user message whose turn failed (best effort: the database may be what failed)."""
    if message_id is None:
        return
    try:
        async with db.transaction() as s:
            await s.execute(update(Message).where(Message.id == message_id).values(status="failed"))
    except Exception:
        log.warning("could not mark message %s as failed", message_id, exc_info=True)


async def mark_answered(s: AsyncSession, message_id: uuid.UUID | None) -> None:
    """A retried message that now has its reply is no longer `failed` (inside the reply's transaction)."""
    if message_id is not None:
        await s.execute(
            update(Message)
            .where(Message.id == message_id, Message.status == "failed")
            .values(status="complete")
        )
