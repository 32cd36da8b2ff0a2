"""Reading a session's messages for scoping: each call is exactly one query.

Besides plain reads, `DbHistory` answers what relevance asks (see
`backend/orrery/memory/scoping/candidates.py`): the session's recent window, kept by the process between
turns so a turn reads only new messages (`window`, coherent across processes through the session's
history epoch, holding only the configured embedding model's vectors), and a full-text search over
the stored search terms of the messages older than it (FTS5 on SQLite, the `search_vector` tsvector
on PostgreSQL).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Hashable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from functools import cache
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import (
    Integer,
    String,
    Uuid,
    and_,
    bindparam,
    cast,
    func,
    literal_column,
    select,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.direct import Direct
from orrery.db.models import ChatSession, Message
from orrery.memory.archive_search import search_postgres, sqlite_query
from orrery.memory.embedding_models import EmbeddingModel
from orrery.memory.embeddings import DIMENSIONS, from_bytes
from orrery.memory.history_cache import CachedWindow, history_cache
from orrery.memory.message_index import STORED_ENCODINGS
from orrery.memory.scoping.base import HistoryMessage
from orrery.memory.scoping.dense import DenseTurn
from orrery.memory.scoping.window import HistoryWindow

_COLUMNS = (
    Message.seq,
    Message.role,
    Message.content,
    Message.agent_id,
    Message.created_at,
    # a message without calls stores JSON `null` (not SQL NULL): both mean none
    and_(Message.tool_calls.is_not(None), cast(Message.tool_calls, String) != "null").label("has_tool_calls"),
    Message.token_counts,
)


LIVE = Message.superseded_at.is_(None)
"""Every history read skips superseded messages (an edited-and-resent message and its reply)."""


_DATABASE_KEYS: WeakKeyDictionary[Any, str] = WeakKeyDictionary()
"""Each engine's URL as text: which database a cached window belongs to."""


def database_key(session: AsyncSession) -> str:
    """Which database `session` talks to, as cached windows are keyed."""
    engine = session.get_bind().engine
    key = _DATABASE_KEYS.get(engine)
    if key is None:  # rendering the URL per turn cost ~0.05 ms
        key = _DATABASE_KEYS[engine] = str(engine.url)
    return key


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


def _extendable(window: HistoryWindow, lo: int, latest: int) -> bool:
    """Whether reading the messages after the window's newest gives exactly `lo..latest`: it holds
    nothing newer than `latest` and nothing is missing between `lo` and what it holds."""
    if not len(window):
        return True
    return window.first_seq <= lo <= window.last_seq + 1 and window.last_seq <= latest


@cache
def window_columns(sqlite: bool) -> tuple[Any, ...]:
    """What a window holds per message, each in its cheapest form to read: counts extracted from
    the JSON by the database, SQLite's timestamp text parsed by `fromisoformat`. Built once per
    dialect (recall's statements, built per call, reuse them)."""
    return (
        Message.seq,
        Message.role,
        Message.content,
        Message.agent_id,
        type_coerce(Message.created_at, String) if sqlite else Message.created_at,
        _COLUMNS[5],
        *(Message.token_counts[name].as_integer() for name in STORED_ENCODINGS),
        Message.search_terms,
        Message.embedding,
        Message.embedding_model,
        Message.embedding_dim,
    )


def _window_rows_query(sqlite: bool) -> Any:
    """`DbHistory._window_rows`'s statement, built once per process and dialect (bound per call)."""
    return (
        select(
            ChatSession.history_epoch,
            ChatSession.created_at,
            type_coerce(Message.id, String),  # only compared: no UUID objects
            *window_columns(sqlite),
        )
        .select_from(ChatSession)
        .outerjoin(
            Message,
            and_(
                Message.session_id == ChatSession.id,
                Message.seq > bindparam("after_seq", type_=Integer()),
                Message.seq <= bindparam("latest_seq", type_=Integer()),
                LIVE,
            ),
        )
        .where(ChatSession.id == bindparam("session_id", type_=Uuid()))
        .order_by(Message.seq)
    )


_WINDOW_ROWS = {sqlite: Direct(_window_rows_query(sqlite)) for sqlite in (True, False)}


def append_rows(window: HistoryWindow, rows: Sequence[Any]) -> None:
    """Add read rows (`window_columns`) to a window, embeddings decoded in one go: only vectors of
    the window's model and size (read from the row) are taken; any other reads as none."""
    if not rows:
        return
    messages, terms, blobs = [], [], []
    dimensions = _dimensions(window, rows)
    for seq, role, content, agent_id, created, calls, *stored, search_terms, blob, model, dim in rows:
        if isinstance(created, str):
            created = datetime.fromisoformat(created).replace(tzinfo=UTC)
        counts = {name: n for name, n in zip(STORED_ENCODINGS, stored, strict=True) if n is not None}
        messages.append(HistoryMessage(seq, role, content, agent_id, created, bool(calls), counts or None))
        terms.append(search_terms)
        usable = blob is not None and model == window.model and dim == dimensions == len(blob) // 2
        blobs.append(blob if usable else None)
    has = [blob is not None for blob in blobs]
    zero = bytes(window.dimensions * 2)
    vectors = from_bytes([blob or zero for blob in blobs], window.dimensions) if any(has) else None
    window.extend(messages, terms, vectors, has)


def _dimensions(window: HistoryWindow, rows: Sequence[Any]) -> int | None:
    """The vector size new rows must have: the window's once it holds vectors, else that of the
    first row with a vector of its model (None when no row has a usable one)."""
    first = next((r[-1] for r in rows if r[-3] is not None and r[-2] == window.model and r[-1]), None)
    if first is None or not window.use_dimensions(first):
        return window.dimensions if first is not None else None
    return int(first)


def _matches(tsquery: str) -> Any:
    """`search_vector @@ to_tsquery('simple', ...)` (PostgreSQL; the terms are already stemmed)."""
    vector: Any = literal_column("messages.search_vector")
    return vector.op("@@")(func.to_tsquery(literal_column("'simple'::regconfig"), tsquery))


class DbHistory:
    """A `HistorySource` (and searchable history) over `messages` of one (already authorized) session."""

    def __init__(
        self,
        session: AsyncSession,
        session_id: uuid.UUID,
        latest_seq: int,
        embedding: EmbeddingModel | None = None,
    ) -> None:
        """`embedding`: the configured model (default: the local one); only its vectors are ranked."""
        self.session = session
        self.session_id = session_id
        self.latest_seq = latest_seq
        self.queries = 0
        self.dense = DenseTurn() if embedding is None else DenseTurn(embedding)

    @property
    def notes(self) -> list[str]:
        """What this turn's ranking could not do (embeddings missing or late), for the receipt."""
        return self.dense.notes

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
        wanted = sorted(set(seqs))
        if self.session.get_bind().dialect.name == "sqlite":
            return await self._fetch(Message.seq.in_(wanted))
        # one array parameter, not one per number: a generic plan for `seq IN ($3, ..., $82)`
        # filtered every message of the session instead of probing the (session_id, seq) index
        return await self._fetch(Message.seq == func.any(bindparam("seqs", wanted, type_=ARRAY(Integer()))))

    @asynccontextmanager
    async def window(self, limit: int) -> AsyncIterator[HistoryWindow]:
        """The newest `limit` messages with their derived columns (see `HistoryWindow`). The process
        keeps the window between turns and reads only newer messages, in one query that also reads
        the session's history epoch and re-reads the newest held message; a changed epoch (a rewind,
        an edit, by any process) or another row in that place (a held row that was never committed,
        a replace no trigger saw) means a full read. While the caller holds it, no other request
        can change it."""
        lo = max(1, self.latest_seq - limit + 1)
        key = (self._database_key(), self.session_id, self.dense.model.name)
        entry = history_cache.take(key)
        if entry is not None and not _extendable(entry.window, lo, self.latest_seq):
            entry = None
        rows: list[Any] = []
        if entry is not None:  # re-read the newest held message too: it must still be the same row
            held = entry.last_id is not None
            stamp, rows = await self._window_rows(entry.window.last_seq - 1 if held else lo - 1)
            if held:
                same = stamp == entry.epoch and rows and rows[0][0] == entry.last_id
                rows = rows[1:] if same else []
                entry = entry if same else None
            elif stamp != entry.epoch:
                entry = None
        if entry is None:
            stamp, rows = await self._window_rows(lo - 1)
            entry = CachedWindow(stamp, HistoryWindow(DIMENSIONS, self.dense.model.name))
        append_rows(entry.window, [row[1:] for row in rows])
        if rows:
            entry.last_id = rows[-1][0]
        entry.window.drop_before(lo)
        entry.window.dense = self.dense
        try:
            yield entry.window
        finally:
            entry.window.dense = None
            history_cache.put(key, entry)

    def _database_key(self) -> str:
        return database_key(self.session)

    async def _window_rows(self, after_seq: int) -> tuple[Hashable, list[Any]]:
        """The session's stamp (history epoch, creation time) and its messages with `after_seq < seq <=
        latest_seq` as (id, *window columns) (one query: the session row outer-joined to the new
        messages, so the stamp comes back with none)."""
        self.queries += 1
        query = _WINDOW_ROWS[self.session.get_bind().dialect.name == "sqlite"]
        params = {"session_id": self.session_id, "after_seq": after_seq, "latest_seq": self.latest_seq}
        rows = await query.rows(self.session, params)
        if not rows:
            return None, []
        # the session's creation time too: a session id reused after a reset starts again at epoch 0
        return (int(rows[0][0]), str(rows[0][1])), [r[2:] for r in rows if r[2] is not None]

    async def search(
        self,
        terms: Sequence[str],
        limit: int,
        before_seq: int | None = None,
        rates: Mapping[str, float] | None = None,
    ) -> list[int]:
        """Numbers of the messages (older than `before_seq`, if given) matching any of the (analyzed)
        terms, best first, from the database's full-text index: how relevance reaches the messages
        older than its window in a long session. `rates`: each term's share of the window's messages,
        which bounds what PostgreSQL reads for common terms (`memory/archive_search.py`)."""
        terms = [t for t in dict.fromkeys(terms) if t.isalnum()]
        end = self.latest_seq + 1 if before_seq is None else min(before_seq, self.latest_seq + 1)
        if not terms or limit <= 0 or end <= 1:
            return []
        self.queries += 1
        if self.session.get_bind().dialect.name != "sqlite":
            return await search_postgres(self.session, self.session_id, terms, limit, end, rates)
        connection = await self.session.connection()
        query = sqlite_query(self.session_id.hex, terms, limit, end, self.session_id)
        return [int(seq) for seq in (await connection.execute(query)).scalars()]

    async def totals(self, through_seq: int, encoding: str) -> tuple[int, int | None]:
        """How many messages up to `through_seq`, and their stored content tokens in `encoding`
        (None if any lacks a stored count): one aggregate query, nothing read or counted in Python."""
        self.queries += 1
        tokens = Message.token_counts[encoding].as_integer()
        row = (
            await self.session.execute(
                select(func.count(), func.sum(tokens), func.count(tokens)).where(
                    Message.session_id == self.session_id, Message.seq <= through_seq, LIVE
                )
            )
        ).one()
        count, total, counted = int(row[0]), row[1], int(row[2])
        return count, int(total or 0) if counted == count else None

    async def _fetch(self, *conditions: Any) -> list[HistoryMessage]:
        self.queries += 1
        connection = await self.session.connection()
        rows = await connection.execute(
            select(*_COLUMNS)
            .where(Message.session_id == self.session_id, LIVE, *conditions)
            .order_by(Message.seq)
        )
        return [_view(r) for r in rows]
