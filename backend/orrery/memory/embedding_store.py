"""Stored vectors of the configured embedding model: computed off a turn's write path, backfilled,
counted.

A remote model is never called while a message is written: `append_message` queues a durable job
(`backend/orrery/ops/jobs.py`) in the writer's transaction, any worker runs it (retried with backoff while
the provider is down; a job that failed for good runs again once the provider answers another job),
and until it has, relevance ranks that message lexically. `reembed` backfills
missing or other-model vectors in batches (idempotent: it resumes where a failed run stopped);
`status` counts what each model has. Writing a vector bumps the session's history epoch (trigger,
migration 0010he), so cached windows pick it up on their next read.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.engine import Database
from orrery.db.models import ChatSession, Job, Message
from orrery.memory.embedding_models import EmbeddingError, EmbeddingModel, embedder_for, expected_dimensions
from orrery.memory.embeddings import EMBED_CHARS, to_bytes
from orrery.ops.jobs import enqueue, requeue_failed

log = logging.getLogger("orrery.embeddings")
EMBED_JOB = "embed_messages"
BATCH = 64
"""Messages per provider call when backfilling."""


def has_text() -> Any:
    """Messages worth a vector (an empty tool-call message has none, nor a forgotten one)."""
    return and_(func.trim(Message.content) != "", Message.forgotten_at.is_(None))


def lacks_vector(model: str) -> Any:
    """Messages with no vector of `model` (none at all, or another model's)."""
    named = Message.embedding_model
    return or_(Message.embedding.is_(None), named.is_(None), named != model)


async def queue_embedding(session: AsyncSession, message_id: uuid.UUID, model: EmbeddingModel) -> None:
    """Queue the job that embeds a just-written message, in the writer's transaction (it exists
    exactly when the message does)."""
    payload = {"model": model.name, "message_ids": [str(message_id)]}
    await enqueue(session, EMBED_JOB, payload, max_attempts=model.job_attempts)


async def run_embed_job(db: Database, model: EmbeddingModel, payload: dict[str, Any]) -> None:
    """The job: embed the payload's messages that still lack a vector of `model`; a job queued for
    another model (the setting changed since) is left to `orrery embeddings reembed`."""
    if payload.get("model") != model.name:
        log.info("embedding job for %s skipped: the configured model is %s", payload.get("model"), model.name)
        return
    ids = [uuid.UUID(i) for i in payload.get("message_ids", [])]
    async with db.sessions() as s:
        rows = (
            await s.execute(
                select(Message.id, Message.content).where(
                    Message.id.in_(ids), has_text(), lacks_vector(model.name)
                )
            )
        ).all()
    if rows:
        await _embed_and_store(db, model, rows)
        await _retry_failed_jobs(db)


async def _retry_failed_jobs(db: Database) -> None:
    """The provider answered: embedding jobs that failed for good while it was down run again (one
    statement; nothing to do is the usual case)."""
    requeued = await requeue_failed(db, EMBED_JOB)
    if requeued:
        log.info("the embedding provider answers again: %d failed embedding jobs queued again", requeued)


async def _embed_and_store(db: Database, model: EmbeddingModel, rows: Sequence[Any]) -> None:
    """One provider call for `rows` (id, content), then one write; `EmbeddingError` stores nothing."""
    embedder = await embedder_for(model)
    if embedder is None:
        raise EmbeddingError(f"{model.name} is not available (its shipped files are missing)")
    vectors = await embedder.embed_async([content[:EMBED_CHARS] for _, content in rows])
    size = int(vectors.shape[1])
    expected = expected_dimensions(model) or await stored_dimensions(db, model.name)
    if expected is not None and size != expected:
        raise EmbeddingError(
            f"{model.name} answered {size}-dimension vectors where {expected} are expected; nothing stored"
        )
    values = [
        {"id": row[0], "embedding": to_bytes(vector), "embedding_model": model.name, "embedding_dim": size}
        for row, vector in zip(rows, vectors, strict=True)
    ]
    async with db.transaction() as s:
        await s.execute(update(Message), values)


_SIZES: dict[tuple[str, str], int] = {}
"""(database, model) -> the size of its stored vectors, once seen (it never changes: others are refused)."""


async def stored_dimensions(db: Database, model: str) -> int | None:
    """The size of `model`'s vectors already stored (the first one sets it), if any."""
    key = (str(db.engine.url), model)
    if key not in _SIZES:
        async with db.sessions() as s:
            found = await s.execute(
                select(Message.embedding_dim)
                .where(Message.embedding_model == model, Message.embedding_dim.is_not(None))
                .limit(1)
            )
            size = found.scalar_one_or_none()
        if size is None:
            return None
        _SIZES[key] = int(size)
    return _SIZES[key]


def _of_user(query: Any, user_id: uuid.UUID | None) -> Any:
    if user_id is None:
        return query
    return query.join(ChatSession, ChatSession.id == Message.session_id).where(ChatSession.user_id == user_id)


async def reembed(
    db: Database,
    model: EmbeddingModel,
    *,
    everything: bool = False,
    user_id: uuid.UUID | None = None,
    batch: int = BATCH,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Give every message with text (of one user, if given) a vector of `model`, `batch` at a time,
    in id order; only those without one unless `everything`. Returns how many were stored; an
    `EmbeddingError` stops it with what was stored kept (running it again resumes)."""
    done, after = 0, None
    while True:
        query = select(Message.id, Message.content).where(has_text())
        if not everything:
            query = query.where(lacks_vector(model.name))
        if after is not None:
            query = query.where(Message.id > after)
        async with db.sessions() as s:
            rows = (await s.execute(_of_user(query, user_id).order_by(Message.id).limit(batch))).all()
        if not rows:
            return done
        await _embed_and_store(db, model, rows)
        done, after = done + len(rows), rows[-1][0]
        if progress is not None:
            progress(done)


@dataclass
class EmbeddingStatus:
    """How many messages with text have a vector of the configured model, none, or another's."""

    model: str
    messages: int = 0
    current: int = 0
    missing: int = 0
    other: dict[str, int] = field(default_factory=dict)
    jobs: dict[str, int] = field(default_factory=dict)
    """Embedding jobs of every user by status (queued, running, failed; done ones are not counted)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": self.messages,
            "current": self.current,
            "missing": self.missing,
            "other_models": self.other,
            "jobs": self.jobs,
        }


async def embedding_status(db: Database, model: str, user_id: uuid.UUID | None = None) -> EmbeddingStatus:
    """Counts for `model` over all messages (or one user's), and the embedding jobs not yet done."""
    status = EmbeddingStatus(model)
    named = func.coalesce(Message.embedding_model, "")
    counts = _of_user(
        select(named, func.count()).where(has_text(), Message.embedding.is_not(None)).group_by(named), user_id
    )
    total = _of_user(select(func.count()).select_from(Message).where(has_text()), user_id)
    pending = select(Job.status, func.count()).where(Job.kind == EMBED_JOB, Job.status != "done")
    async with db.sessions() as s:
        status.messages = int((await s.execute(total)).scalar_one())
        for name, n in (await s.execute(counts)).all():
            if name == model:
                status.current = int(n)
            elif name:
                status.other[name] = int(n)
        status.jobs = {k: int(n) for k, n in (await s.execute(pending.group_by(Job.status))).all()}
    status.missing = status.messages - status.current - sum(status.other.values())
    return status
