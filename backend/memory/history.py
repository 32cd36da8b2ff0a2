"""Reading a session's messages for scoping: each call is exactly one query.

Besides plain reads, `DbHistory` answers the searchable-history questions relevance asks (see
`backend/memory/scoping/candidates.py`): an outline of the session without message text (stored
token counts and embeddings), a full-text search over the stored search terms (FTS5 on SQLite, the
`search_vector` tsvector on PostgreSQL), and the text of chosen messages only.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Float, Integer, String, func, literal_column, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from backend.db.models import Message
from backend.memory.scoping.base import HistoryMessage
from backend.memory.scoping.candidates import OutlineRow
from backend.text import bm25_scores

_COLUMNS = (
    Message.seq,
    Message.role,
    Message.content,
    Message.agent_id,
    Message.created_at,
    Message.tool_calls.is_not(None).label("has_tool_calls"),
    Message.token_counts,
)


def _view(row: Any) -> HistoryMessage:
    return HistoryMessage(
        seq=row.seq,
        role=row.role,
        content=row.content,
        agent_id=row.agent_id,
        created_at=row.created_at,
        has_tool_calls=bool(row.has_tool_calls),
        token_counts=row.token_counts,
    )


def _matches(tsquery: str) -> Any:
    """`search_vector @@ to_tsquery('simple', ...)` (PostgreSQL; the terms are already stemmed)."""
    vector: Any = literal_column("messages.search_vector")
    return vector.op("@@")(func.to_tsquery(literal_column("'simple'::regconfig"), tsquery))


class DbHistory:
    """A `HistorySource` (and searchable history) over `messages` of one (already authorized) session."""

    def __init__(self, session: AsyncSession, session_id: uuid.UUID, latest_seq: int) -> None:
        self.session = session
        self.session_id = session_id
        self.latest_seq = latest_seq
        self.queries = 0

    async def recent(self, limit: int) -> list[HistoryMessage]:
        """The newest `limit` messages, oldest first."""
        if limit <= 0 or self.latest_seq == 0:
            return []
        return await self._fetch(Message.seq > self.latest_seq - limit, Message.seq <= self.latest_seq)

    async def between(self, after_seq: int, through_seq: int) -> list[HistoryMessage]:
        """Messages with `after_seq < seq <= through_seq`, oldest first."""
        if through_seq <= after_seq:
            return []
        return await self._fetch(Message.seq > after_seq, Message.seq <= through_seq)

    async def fetch(self, seqs: Sequence[int]) -> list[HistoryMessage]:
        """The messages with these numbers, oldest first."""
        if not seqs:
            return []
        return await self._fetch(Message.seq.in_(sorted(set(seqs))))

    async def outline(self, limit: int, encoding: str) -> list[OutlineRow]:
        """The newest `limit` messages without their text: number, role, stored count in `encoding`
        (extracted by the database, no JSON decoding here), embedding, time."""
        if limit <= 0 or self.latest_seq == 0:
            return []
        self.queries += 1
        connection = await self.session.connection()  # plain rows: no ORM result processing
        sqlite = connection.dialect.name == "sqlite"
        # SQLite returns timestamps as text that SQLAlchemy parses row by row; only the day is needed
        when: Any = func.date(Message.created_at, type_=String) if sqlite else Message.created_at
        rows = await connection.execute(
            select(
                Message.seq,
                Message.role,
                Message.token_counts[encoding].as_integer(),
                Message.embedding,
                when,
            )
            .where(
                Message.session_id == self.session_id,
                Message.seq > self.latest_seq - limit,
                Message.seq <= self.latest_seq,
            )
            .order_by(Message.seq)
        )
        return [
            OutlineRow(seq, role, tokens, vector, datetime.fromisoformat(day) if sqlite and day else day)
            for seq, role, tokens, vector, day in rows
        ]

    async def search(self, terms: Sequence[str], limit: int) -> list[int]:
        """Numbers of the messages matching any of the (analyzed) terms, best first."""
        terms = [t for t in dict.fromkeys(terms) if t.isalnum()]
        if not terms or limit <= 0:
            return []
        self.queries += 1
        if self.session.get_bind().dialect.name == "sqlite":
            fts = (
                text(
                    "SELECT rowid AS rid, bm25(messages_fts, 1.0, 0.0) AS score FROM messages_fts "
                    "WHERE messages_fts MATCH :q"
                )
                .bindparams(
                    q=f'session_id : "{self.session_id.hex}" AND search_terms : ({" OR ".join(terms)})'
                )
                .columns(rid=Integer, score=Float)
                .subquery()
            )
            query = (
                select(Message.seq)
                .join(fts, literal_column("messages.rowid") == fts.c.rid)
                .where(Message.session_id == self.session_id, Message.seq <= self.latest_seq)
                .order_by(fts.c.score, Message.seq.desc())
                .limit(limit)
            )
        else:
            return await self._search_postgres(terms, limit)
        connection = await self.session.connection()
        return [int(seq) for seq in (await connection.execute(query)).scalars()]

    async def _search_postgres(self, terms: list[str], limit: int) -> list[int]:
        """The GIN index finds the matches; they are ranked by BM25 in Python with the session's own
        statistics (one aggregate query), because `ts_rank` has no inverse document frequency."""
        connection = await self.session.connection()
        in_session = (Message.session_id == self.session_id, Message.seq <= self.latest_seq)
        vector: Any = literal_column("messages.search_vector")
        tsquery = func.to_tsquery(literal_column("'simple'::regconfig"), " | ".join(terms))
        matches = (
            await connection.execute(
                select(Message.seq, Message.search_terms).where(*in_session, vector.op("@@")(tsquery))
            )
        ).all()
        if not matches:
            return []
        stats = select(
            func.count(),
            func.avg(
                func.length(Message.search_terms)
                - func.length(func.replace(Message.search_terms, " ", ""))
                + 1
            ),
            *(
                func.count().filter(
                    vector.op("@@")(func.to_tsquery(literal_column("'simple'::regconfig"), t))
                )
                for t in terms
            ),
        ).where(*in_session)
        n, avg_len, *freq = (await connection.execute(stats)).one()
        docs = [(terms_text or "").split() for _, terms_text in matches]
        scores = bm25_scores(
            terms, docs, corpus=(int(n), float(avg_len or 1.0), dict(zip(terms, freq, strict=True)))
        )
        order = sorted(range(len(matches)), key=lambda i: (-scores[i], -matches[i][0]))
        return [int(matches[i][0]) for i in order[:limit]]

    async def totals(self, through_seq: int, encoding: str) -> tuple[int, int | None]:
        """How many messages up to `through_seq`, and their stored content tokens in `encoding`
        (None if any lacks a stored count): one aggregate query, nothing read or counted in Python."""
        self.queries += 1
        tokens = Message.token_counts[encoding].as_integer()
        row = (
            await self.session.execute(
                select(func.count(), func.sum(tokens), func.count(tokens)).where(
                    Message.session_id == self.session_id, Message.seq <= through_seq
                )
            )
        ).one()
        count, total, counted = int(row[0]), row[1], int(row[2])
        return count, int(total or 0) if counted == count else None

    async def _fetch(self, *conditions: Any) -> list[HistoryMessage]:
        self.queries += 1
        connection = await self.session.connection()
        rows = await connection.execute(
            select(*_COLUMNS).where(Message.session_id == self.session_id, *conditions).order_by(Message.seq)
        )
        return [_view(r) for r in rows]
