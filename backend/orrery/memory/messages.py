"""Appending a message: the row, its next `seq`, and what scoping reads back on every later turn
(token counts, search terms, the local embedding), computed once when the message is written."""

from __future__ import annotations

import uuid
from typing import Any, cast

from sqlalchemy import Table, bindparam, insert, inspect, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from orrery.db.base import utcnow
from orrery.db.direct import Direct, Loader
from orrery.db.models import ChatSession, Message
from orrery.errors import NotFoundError, ValidationError
from orrery.memory.capture import store_standing
from orrery.memory.embedding_models import LOCAL, EmbeddingModel
from orrery.memory.embeddings import DIMENSIONS, MODEL_NAME, get_embedder, load_embedder, message_vector
from orrery.memory.message_index import index_fields
from orrery.memory.standing import cued as cued_message
from orrery.memory.standing import detect
from orrery.repo.chat import NewMessage, check_agent
from orrery.repo.scope import as_uuid
from orrery.vocabulary import MESSAGE_ROLES

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
_MESSAGES = cast(Table, Message.__table__)
_FIELDS = [c for c in _MESSAGES.c if c.name not in ("seq", "forgotten_at")]
"""What an insert writes: `forgotten_at` only ever comes later, set by a forget (`repo.lineage`)."""
_COLUMNS = [*(c.name for c in _FIELDS), "seq"]
_ROW = [bindparam(f"m_{c.name}", type_=c.type) for c in _FIELDS]
"""The row's parameters, named `m_<column>`: a parameter named as a column of `chat_sessions`
would become one more `SET` of the `UPDATE` below."""
_COUNTED = _NEXT_SEQ.cte("counted")
_COUNT_AND_INSERT = Direct(
    insert(_MESSAGES)
    .add_cte(_COUNTED)
    .from_select(_COLUMNS, select(*_ROW, _COUNTED.c.message_count))
    .returning(_MESSAGES.c.seq)
)
"""PostgreSQL: `_NEXT_SEQ` and the insert in one statement (a data-modifying `WITH`), one round
trip instead of two; an unknown session counts nothing and inserts nothing (no row comes back)."""
_INSERT_NEXT = Direct(
    insert(_MESSAGES)
    .from_select(
        _COLUMNS,
        select(*_ROW, _SESSIONS.c.message_count + 1).where(
            _SESSIONS.c.id == bindparam("sid"), _SESSIONS.c.user_id == bindparam("owner")
        ),
    )
    .returning(_MESSAGES.c.seq)
)
"""SQLite, which has no `UPDATE` inside `WITH`: the row takes the next `seq` from its session, and
the trigger `messages_count_in_session` (migration 0014) counts it there. One statement, atomic by
itself, so storing a message needs no `BEGIN IMMEDIATE` around it; an unknown session inserts
nothing."""


_STORED = Loader.of(Message)
"""Builds the stored message as a query loads a row: `Message(**values)` sets each of the ~20
attributes through its instrumentation, ~0.1 ms a message."""


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
    that embeds it, when `embedding` is a remote model, and the standing instruction or preference a
    person's message states: `memory/capture.py`; a caller storing by one autocommit statement asks
    `states_standing` first)."""
    if new.role not in MESSAGE_ROLES:
        raise ValidationError(f"unknown role {new.role!r}; expected one of {', '.join(MESSAGE_ROLES)}")
    check_agent(new.agent_id)
    sid = as_uuid(session_id, "session")
    # computed once, before the row lock is taken: what scoping reads back on every later turn
    token_counts, terms = index_fields(new.content)
    embedder = None if embedding.remote else await get_embedder()
    vector = message_vector(embedder, new.content) if embedder else None
    standing = detect(new.content, embedder) if new.role == "user" else None  # a regex, most messages
    values = {
        "id": new.id or uuid.uuid4(),
        "session_id": sid,
        "role": new.role,
        "content": new.content,
        "agent_id": new.agent_id,
        "tool_calls": new.tool_calls,
        "prompt_tokens": new.prompt_tokens,
        "completion_tokens": new.completion_tokens,
        "token_count": new.token_count,
        "latency_ms": new.latency_ms,
        "cost_usd": new.cost_usd,
        "model": new.model,
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
    values["seq"] = await _count_and_insert(session, sid, user_id, values)
    held = session.sync_session.identity_map.get(_identity(sid))
    if held is not None:  # the session's row this transaction read: it counts the message too
        set_committed_value(held, "message_count", values["seq"])
    message = _STORED.build([values.get(key) for key in _STORED.keys])  # read back (no `forgotten_at`)
    assert message is not None  # it has its id
    if standing is not None:  # a standing instruction or preference: stored with the message
        await store_standing(session, user_id, sid, message.seq, message.created_at, standing)
    if embedding.remote and new.content.strip():
        from orrery.memory.embedding_store import queue_embedding

        await queue_embedding(session, message.id, embedding)
    return message


async def _count_and_insert(
    session: AsyncSession, sid: uuid.UUID, owner: uuid.UUID, values: dict[str, Any]
) -> int:
    """Count the message in its session and insert its row, in one statement (Core: the row as
    given, no unit of work); its `seq`. The session's `updated_at` becomes the message's time.
    Not found: the session is not the owner's."""
    row = {f"m_{name}": value for name, value in values.items()}
    params = {**row, "sid": sid, "owner": owner}
    if session.get_bind().dialect.name == "postgresql":
        counted = await _COUNT_AND_INSERT.rows(session, {**params, "now": values["created_at"]})
    else:
        counted = await _INSERT_NEXT.rows(session, params)
    if not counted:
        raise NotFoundError("session", sid)
    return int(counted[0][0])


def states_standing(role: str, content: str) -> bool:
    """Whether storing this message would also store a standing instruction (so it needs a
    transaction, not one autocommit statement). The same decision `append_message` makes; with the
    embedder loaded, the sentence vectors it computes are kept for that call (`embed_once`)."""
    if role != "user" or not cued_message(content):
        return False
    return detect(content, load_embedder()) is not None
