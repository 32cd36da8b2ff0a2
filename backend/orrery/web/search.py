"""The sidebar's search over the user's chats: titles (substring, any case) and message text through
a full-text index (FTS5's `recall_fts` on SQLite, the `search_vector` tsvector on PostgreSQL), every
term required. Two queries, both scoped to the user before any text is matched; superseded (and,
on both dialects alike, failed) messages are not searched."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, func, literal_column, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import ChatSession, Message
from orrery.memory.recall.queries import OWNER_KEY
from orrery.text import analyze, preview
from orrery.web.views import plain

MAX_HITS = 20


@dataclass(frozen=True)
class SearchHit:
    """A chat that matches, with the message that matched (None: the title did)."""

    session_id: uuid.UUID
    title: str | None
    excerpt: str | None
    seq: int | None


async def search_chats(session: AsyncSession, user_id: uuid.UUID, query: str) -> list[SearchHit]:
    """Chats whose title contains `query` first, then chats with a message holding all its terms."""
    query = " ".join(query.split())[:200]
    if not query:
        return []
    pattern = "%" + query.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    titled = (
        await session.execute(
            select(ChatSession.id, ChatSession.title)
            .where(ChatSession.user_id == user_id, func.lower(ChatSession.title).like(pattern, escape="\\"))
            .order_by(ChatSession.updated_at.desc())
            .limit(MAX_HITS)
        )
    ).all()
    hits = [SearchHit(row.id, row.title, None, None) for row in titled]
    seen = {h.session_id for h in hits}
    for row in await _message_rows(session, user_id, list(dict.fromkeys(analyze(query)))):
        if row.session_id not in seen and len(hits) < MAX_HITS:
            seen.add(row.session_id)
            hits.append(SearchHit(row.session_id, row.title, preview(plain(row.content), 120), row.seq))
    return hits


async def _message_rows(session: AsyncSession, user_id: uuid.UUID, terms: list[str]) -> list[Any]:
    """The caller's messages holding every term, newest first. The index is read for the caller
    alone, so the time taken says nothing about anyone else's messages (issue 51): on SQLite
    through `recall_fts`, whose terms carry their owner's key (migration 0020rf; it leaves out
    failed and superseded messages); on PostgreSQL the caller's messages are gathered first (a
    materialized CTE) and only they are matched, never the whole GIN index."""
    terms = [t for t in terms if t.isalnum()][:8]
    if not terms:
        return []
    mine = (
        select(Message.id, Message.created_at)
        .join(ChatSession, ChatSession.id == Message.session_id)
        .where(
            ChatSession.user_id == user_id,
            Message.superseded_at.is_(None),
            Message.status != "failed",
            Message.role != "tool",
        )
    )
    if session.get_bind().dialect.name == "sqlite":
        key = user_id.hex[:OWNER_KEY]
        fts = (
            text("SELECT rowid AS rid FROM recall_fts WHERE recall_fts MATCH :q")
            .bindparams(q=f"terms : ({' AND '.join(key + t for t in terms)})")
            .columns(rid=Integer)
            .cte("matched")
            .prefix_with("MATERIALIZED")  # the caller's postings first, then their rows by rowid
        )
        found = mine.join(fts, literal_column("messages.rowid") == fts.c.rid).subquery()
    else:
        vector: Any = literal_column("messages.search_vector")
        scoped = mine.add_columns(vector.label("vector")).cte("mine").prefix_with("MATERIALIZED")
        tsquery = func.to_tsquery(literal_column("'simple'::regconfig"), " & ".join(terms))
        found = select(scoped.c.id, scoped.c.created_at).where(scoped.c.vector.op("@@")(tsquery)).subquery()
    query = (
        select(Message.session_id, Message.seq, Message.content, ChatSession.title)
        .join(found, found.c.id == Message.id)
        .join(ChatSession, ChatSession.id == Message.session_id)
        .order_by(found.c.created_at.desc())
        .limit(MAX_HITS * 5)
    )
    return list((await session.execute(query)).all())
