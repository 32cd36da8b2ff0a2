"""Chats written in bulk, as benchmarks and plan tests need them: thousands of messages in one
`INSERT`, with the columns `append_message` would store, instead of a turn per message."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.models import ChatSession, Message
from orrery.memory.message_index import index_fields

TOPICS = "garden ferry harbour budget invoice piano lessons marathon knee tomatoes".split()  # noqa: SIM905
"""Ten everyday topics a long chat keeps coming back to."""


async def write_chat(
    s: AsyncSession,
    chat_id: uuid.UUID,
    contents: Sequence[str],
    columns: Sequence[dict[str, Any]] | None = None,
) -> None:
    """Write `contents` as the chat's messages (seq from 1, the person first, then in turn) and set
    its count. `columns`: what each message stores beside its text (e.g. `index_columns`'s, with
    embeddings); by default its search terms."""
    stored = columns if columns is not None else [{"search_terms": index_fields(c)[1]} for c in contents]
    rows = [
        {
            "session_id": chat_id,
            "seq": i + 1,
            "role": "user" if i % 2 == 0 else "assistant",
            "content": content,
            "created_at": utcnow(),
            **extra,
        }
        for i, (content, extra) in enumerate(zip(contents, stored, strict=True))
    ]
    await s.execute(insert(Message), rows)
    record = await s.get(ChatSession, chat_id)
    assert record is not None
    record.message_count = len(contents)
