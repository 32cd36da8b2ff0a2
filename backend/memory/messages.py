"""Appending a message: the row, its next `seq`, and what scoping reads back on every later turn
(token counts, search terms, the local embedding), computed once when the message is written."""

from __future__ import annotations

import uuid
from typing import Any, cast

from sqlalchemy import Table, bindparam, insert, inspect, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from backend.db.base import utcnow
from backend.db.models import ChatSession, Message
from backend.errors import NotFoundError, ValidationError
from backend.memory.embedding_models import LOCAL, EmbeddingModel
from backend.memory.embeddings import DIMENSIONS, MODEL_NAME, get_embedder, message_vector
from backend.memory.message_index import index_fields
from backend.repo.chat import NewMessage, check_agent
from backend.repo.scope import as_uuid
from backend.vocabulary import MESSAGE_ROLES

_SESSIONS = cast(Table, ChatSession.__table__)
_NEXT_SEQ = (
    update(_SESSIONS)
    .where(_SESSIONS.c.id == bindparam("sid"), _SESSIONS.c.user_id == bindparam("owner"))
    .values(message_count=_SESSIONS.c.message_count + 1, updated_at=bindparam("now"))
    .returning(_SESSIONS.c.message_count)
)
"""Counts the message in its session and gives its `seq` (built once per process). On the table,
not the mapped class: the ORM's bulk-update path costs ~0.2 ms more a statement, for a row this
transaction's identity map is told about by hand below."""
_INSERT = insert(cast(Table, Message.__table__))


def _detached(values: dict[str, Any]) -> Message:
    """A `Message` holding `values`, built as the ORM builds a loaded row (its attributes written
    to the instance's dict): `Message(**values)` sets each of the ~20 through its instrumentation,
    ~0.1 ms a message."""
    message: Message = Message.__mapper__.class_manager.new_instance()
    message.__dict__.update(values)
    return message


def _identity(sid: uuid.UUID) -> Any:
    return inspect(ChatSession).identity_key_from_primary_key((sid,))


async def append_message(
    session: AsyncSession,
    user_id: uuid.UUID,
    session_id: uuid.UUID | str,
    new: NewMessage,
    *,
    embedding: EmbeddingModel = LOCAL,
) -> Message:
    """Append a message with the next `seq`; the counter and the row commit together (with the job
    that embeds it, when `embedding` is a remote model)."""
    if new.role not in MESSAGE_ROLES:
        raise ValidationError(f"unknown role {new.role!r}; expected one of {', '.join(MESSAGE_ROLES)}")
    check_agent(new.agent_id)
    sid = as_uuid(session_id, "session")
    # computed once, before the row lock is taken: what scoping reads back on every later turn
    token_counts, terms = index_fields(new.content)
    embedder = None if embedding.remote else await get_embedder()
    vector = message_vector(embedder, new.content) if embedder else None
    seq = (
        await session.execute(_NEXT_SEQ, {"sid": sid, "owner": user_id, "now": utcnow()})
    ).scalar_one_or_none()
    if seq is None:
        raise NotFoundError("session", sid)
    held = session.sync_session.identity_map.get(_identity(sid))
    if held is not None:  # the session's row this transaction read: it counts the message too
        set_committed_value(held, "message_count", seq)
    values = {
        "id": uuid.uuid4(),
        "session_id": sid,
        "seq": seq,
        "role": new.role,
        "content": new.content,
        "agent_id": new.agent_id,
        "tool_calls": new.tool_calls,
        "prompt_tokens": new.prompt_tokens,
        "completion_tokens": new.completion_tokens,
        "token_count": new.token_count,
        "latency_ms": new.latency_ms,
        "cost_usd": new.cost_usd,
        "client_key": new.client_key,
        "request_fingerprint": new.request_fingerprint,
        "status": new.status,
        "created_at": new.created_at or utcnow(),
        "token_counts": token_counts,
        "search_terms": terms,
        "embedding": vector,
        "embedding_model": MODEL_NAME if vector else None,
        "embedding_dim": DIMENSIONS if vector else None,
        "superseded_at": None,
    }
    await session.execute(_INSERT, values)  # Core: the row as given, no unit of work
    message = _detached(values)  # what callers read back; not attached to `session`
    if embedding.remote and new.content.strip():
        from backend.memory.embedding_store import queue_embedding

        await queue_embedding(session, message.id, embedding)
    return message
