"""Recall's three reads, each one query whatever the number of chats, each re-checking in SQL whom
and what may be recalled (so a chat deleted or set `remember: false` by any process is gone on the
next turn; nothing about it is cached).

May be recalled: the calling person's own chats (`chat_sessions.user_id`), never the current one,
with `remember` on, in the current chat's project (no project: the person's other chats without
one), or in any project when the person allows it (`users.recall_other_projects`); nothing when
`users.recall_across_chats` is off. Of their messages: never superseded, failed or forgotten ones.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    Float,
    Integer,
    String,
    Uuid,
    and_,
    bindparam,
    cast,
    column,
    false,
    func,
    literal_column,
    or_,
    select,
    text,
    true,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from orrery.db.direct import Direct
from orrery.db.models import ChatSession, Message, User
from orrery.memory.history import LIVE, window_columns


@dataclass(frozen=True)
class ChatInfo:
    """An earlier chat as recall labels and boosts it."""

    id: uuid.UUID
    title: str | None
    created_at: datetime
    message_count: int
    project_id: uuid.UUID | None
    focus: tuple[str, uuid.UUID] | None
    stamp: tuple[int, int, int] = (0, 0, 0)
    """(history epoch, failed messages, messages): any change by any process changes it, so a
    process's copy of the chat's messages is used only while it matches (`pool.py`)."""


@dataclass(frozen=True)
class Scope:
    """Whose chats, and which: the caller and the chat being answered."""

    user_id: uuid.UUID
    chat_id: uuid.UUID
    project_id: uuid.UUID | None

    def params(self) -> dict[str, Any]:
        """The values the statements below are bound with."""
        return {"user_id": self.user_id, "chat_id": self.chat_id, "project_id": self.project_id}


def same_project(no_project: bool) -> Any:
    """Whether a chat is in the current chat's project (both without one counts)."""
    if no_project:
        return ChatSession.project_id.is_(None)
    return ChatSession.project_id == bindparam("project_id", type_=Uuid())


def chats_of(no_project: bool) -> list[Any]:
    """The conditions on `chat_sessions` joined to `users` every read repeats (bound per call)."""
    return [
        ChatSession.user_id == bindparam("user_id", type_=Uuid()),
        User.id == ChatSession.user_id,
        ChatSession.id != bindparam("chat_id", type_=Uuid()),
        ChatSession.remember.is_(true()),
        User.recall_across_chats.is_(true()),
        or_(same_project(no_project), User.recall_other_projects.is_(true())),
    ]


RECALLABLE = (LIVE, Message.status != "failed", Message.forgotten_at.is_(None))
"""Of a recallable chat's messages: never superseded (edited away), failed or forgotten ones (a turn
that said or quoted a forgotten fact: `orrery.repo.lineage`)."""

_CHAT_COLUMNS = (
    type_coerce(ChatSession.id, String),
    ChatSession.title,
    type_coerce(ChatSession.created_at, String),
    ChatSession.message_count,
    type_coerce(ChatSession.project_id, String),
    ChatSession.focus_kind,
    type_coerce(ChatSession.focus_id, String),
)
"""Ids and the date read as the driver gives them (text on SQLite), made objects once per chat by
`_info`, not once per row: a `matches` row repeats its chat's columns for every message read."""
_FAILED = (
    select(func.count())
    # a literal, the partial index's own condition: a generic plan (`db.engine`) cannot use the
    # index for a bound status, and would read every message of every earlier chat
    .where(Message.session_id == ChatSession.id, Message.status == literal_column("'failed'"))
    .correlate(ChatSession)
    .scalar_subquery()
)
"""A message marked failed later changes no history epoch (the status is not a watched column)."""


def _info(row: Sequence[Any], epoch: int = 0, failed: int = 0) -> ChatInfo:
    cid, title, created, count, project, kind, focus = row[:7]
    count = int(count or 0)
    if isinstance(created, str):
        created = datetime.fromisoformat(created).replace(tzinfo=UTC)
    return ChatInfo(
        as_uuid(cid),
        title,
        created,
        count,
        as_uuid(project) if project is not None else None,
        (kind, as_uuid(focus)) if kind and focus is not None else None,
        (int(epoch), int(failed), count),
    )


def as_uuid(raw: Any) -> uuid.UUID:
    """An id as the driver gives it (text on SQLite, a UUID on PostgreSQL) as a UUID."""
    return raw if isinstance(raw, uuid.UUID) else uuid.UUID(str(raw))


@lru_cache(maxsize=4)
def _recent_query(no_project: bool) -> Direct:
    """`recent_chats`'s statement, built once per process (and project or none), run on the driver."""
    return Direct(
        select(User.recall_across_chats, *_CHAT_COLUMNS, ChatSession.history_epoch, _FAILED)
        .select_from(User)
        .outerjoin(ChatSession, and_(*chats_of(no_project)))
        .where(User.id == bindparam("user_id", type_=Uuid()))
        .order_by(same_project(no_project).desc(), ChatSession.updated_at.desc(), ChatSession.id)
        .limit(bindparam("limit", type_=Integer()))
    )


async def recent_chats(session: AsyncSession, scope: Scope, limit: int) -> tuple[bool, list[ChatInfo]]:
    """(recall on, the newest recallable chats, the same project's first): one query, the person's
    row outer-joined to their chats so the setting comes back even when no chat may be recalled."""
    rows = await _recent_query(scope.project_id is None).rows(session, {**scope.params(), "limit": limit})
    if not rows:
        return False, []
    return bool(rows[0][0]), [_info(r[1:8], r[8], r[9]) for r in rows if r[1] is not None]


async def matches(
    session: AsyncSession,
    scope: Scope,
    terms: Sequence[str],
    skip: Sequence[uuid.UUID],
    limit: int,
    around: int,
) -> list[Any]:
    """The best `limit` full-text matches among the recallable chats not in `skip` (FTS5's BM25 on
    SQLite, `ts_rank` on PostgreSQL), each read with the `around` messages before and after it, in
    one query: `(*chat columns, *window columns)` rows, chats oldest first, each in seq order."""
    terms = [t for t in dict.fromkeys(terms) if t.isalnum()]
    if not terms or limit <= 0:
        return []
    sqlite = session.get_bind().dialect.name == "sqlite"
    query = _matches_query(sqlite, scope.project_id is None)
    match = _fts_match(scope.user_id, terms, skip) if sqlite else " | ".join(terms)
    params = {**scope.params(), "match": match, "skip": list(skip) or [uuid.UUID(int=0)]}
    params.update(limit=limit, around=around, ranked=FTS_RANKED * limit)
    return list((await (await session.connection()).execute(query, params)).all())


FTS_RANKED = 4
"""On SQLite, FTS5 ranks the person's matches outside the chats read otherwise and keeps this many
times the matches wanted (the index cannot know which chats are remembered or in this project). Its
`bm25` sees no row sizes (`recall_fts` stores none: migration 0021rs), so it ranks by the terms'
rarity and counts without length normalisation, 4x cheaper; it only picks which matches are read,
and every message read is ranked again with full BM25 (`ranked.py`)."""
OWNER_KEY = 12
"""Hex digits of the owner's id prefixed to each term in `recall_fts` (migration 0020rf)."""


def _fts_match(user_id: uuid.UUID, terms: Sequence[str], skip: Sequence[uuid.UUID]) -> str:
    """The FTS5 query over `recall_fts`: any of the terms, the person's own (each term carries its
    owner's key), in none of the `skip` chats."""
    key = user_id.hex[:OWNER_KEY]
    match = f"terms : ({' OR '.join(key + t for t in terms)})"
    return f"{match} NOT chat : ({' OR '.join(s.hex for s in skip)})" if skip else match


@lru_cache(maxsize=8)
def _matches_query(sqlite: bool, no_project: bool) -> Any:
    """`matches`'s statement, built once per process, dialect and project or none."""
    hit = aliased(Message, name="hit")
    hits = _sqlite_hits(hit, no_project) if sqlite else _pg_hits(hit, no_project)
    around = bindparam("around", type_=Integer())
    near = and_(Message.session_id == hits.c.sid, Message.seq.between(hits.c.at - around, hits.c.at + around))
    return (
        select(*_CHAT_COLUMNS, *window_columns(sqlite))
        .select_from(hits)
        .join(Message, near)
        .join(ChatSession, Message.session_id == ChatSession.id)
        .join(User, User.id == ChatSession.user_id)
        .where(*chats_of(no_project), *RECALLABLE)
        .distinct()
        .order_by(ChatSession.created_at, ChatSession.id, Message.seq)
    )


def _sqlite_hits(hit: Any, no_project: bool) -> Any:
    """SQLite's best matches: FTS5 ranks the person's own postings (`recall_fts`), the best few
    are joined and checked."""
    fts = (
        text(
            "SELECT rowid AS rid, bm25(recall_fts, 1.0, 0.0) AS score FROM recall_fts "
            "WHERE recall_fts MATCH :match ORDER BY score LIMIT :ranked"
        )
        .columns(rid=Integer, score=Float)
        .subquery()
    )
    return (
        select(hit.session_id.label("sid"), hit.seq.label("at"))
        .select_from(fts.join(hit, literal_column("hit.rowid") == fts.c.rid))
        .join(ChatSession, hit.session_id == ChatSession.id)
        .join(User, User.id == ChatSession.user_id)
        .where(
            *chats_of(no_project),
            *_recallable(hit),
            hit.session_id.not_in(bindparam("skip", expanding=True, type_=Uuid())),
        )
        .order_by(fts.c.score, hit.seq.desc())
        .limit(bindparam("limit", type_=Integer()))
        .subquery()
    )


def _pg_hits(hit: Any, no_project: bool) -> Any:
    """PostgreSQL's best matches: each recallable chat asked for its own best `limit` (a `LATERAL`
    subquery, never flattened, so the plan is the same with or without statistics), by the
    `(session_id, search_vector)` GIN index (0026pg) or, without `btree_gin`, the chat's seq index:
    only the person's rows are read, however many other people's messages match the terms."""
    vector: Any = literal_column("hit.search_vector")
    tsquery = func.to_tsquery(literal_column("'simple'::regconfig"), bindparam("match", type_=String()))
    chats = (
        select(ChatSession.id.label("cid"))
        .join(User, User.id == ChatSession.user_id)
        .where(*chats_of(no_project), ChatSession.id.not_in(bindparam("skip", expanding=True, type_=Uuid())))
        .subquery("chats")
    )
    score = func.ts_rank(vector, tsquery)
    best = (
        select(hit.session_id.label("sid"), hit.seq.label("at"), score.label("score"))
        .where(hit.session_id == chats.c.cid, *_recallable(hit), vector.op("@@")(tsquery))
        .order_by(score.desc(), hit.seq.desc())
        .limit(bindparam("limit", type_=Integer()))
        .lateral("best")
    )
    return (
        select(best.c.sid, best.c.at)
        .select_from(chats.join(best, true()))
        .order_by(best.c.score.desc(), best.c.at.desc())
        .limit(bindparam("limit", type_=Integer()))
        .subquery()
    )


def _recallable(hit: Any) -> tuple[Any, ...]:
    """`RECALLABLE` for an alias of `messages`."""
    return (hit.superseded_at.is_(None), hit.status != "failed", hit.forgotten_at.is_(None))


def chat_of(row: Sequence[Any]) -> ChatInfo:
    """The chat of a `matches` row (its first seven columns)."""
    return _info(row)


async def read_spans(
    session: AsyncSession, scope: Scope, spans: Sequence[tuple[uuid.UUID, int, int]]
) -> list[Any]:
    """The recallable messages with `lo <= seq <= hi` of each `(chat, lo, hi)`, in one query, as
    `(chat id as text, *window columns)` rows: chats oldest first, each in seq order."""
    if not spans:
        return []
    if session.get_bind().dialect.name != "sqlite":
        bound: dict[str, list[Any]] = {
            "span_chats": [str(chat) for chat, _, _ in spans],
            "span_los": [lo for _, lo, _ in spans],
            "span_his": [hi for _, _, hi in spans],
        }
        return await _pg_spans_query(scope.project_id is None).rows(session, scope.params() | bound)
    query = _spans_query(len(spans), scope.project_id is None)
    numbered: dict[str, object] = {
        f"{key}{i}": value for i, span in enumerate(spans) for key, value in zip("clh", span, strict=True)
    }
    return await query.rows(session, scope.params() | numbered)


@lru_cache(maxsize=2)
def _pg_spans_query(no_project: bool) -> Direct:
    """PostgreSQL: the spans as three arrays, each read by the chat's `(session_id, seq)` index in a
    `LATERAL` subquery. An `OR` of one range per span let a generic plan for 50 chats read 80,000
    rows (every message of the person's chats and more) before it filtered; here each span is one
    index range whatever the number of spans."""
    span = (
        func.unnest(
            cast(bindparam("span_chats", type_=ARRAY(String())), ARRAY(Uuid())),  # ids sent as text
            bindparam("span_los", type_=ARRAY(Integer())),
            bindparam("span_his", type_=ARRAY(Integer())),
        )
        .table_valued(column("chat", Uuid()), column("lo", Integer()), column("hi", Integer()))
        .render_derived(name="span")
    )
    read = (
        select(Message.session_id.label("sid"), *window_columns(False))
        .where(Message.session_id == span.c.chat, Message.seq.between(span.c.lo, span.c.hi), *RECALLABLE)
        .lateral("read")
    )
    return Direct(
        select(type_coerce(read.c.sid, String), *(c for c in read.c if c.key != "sid"))
        .select_from(span.join(read, true()))
        .join(ChatSession, ChatSession.id == span.c.chat)
        .join(User, User.id == ChatSession.user_id)
        .where(*chats_of(no_project))
        .order_by(ChatSession.created_at, read.c.sid, read.c.seq)
    )


@lru_cache(maxsize=128)
def _spans_query(n: int, no_project: bool) -> Direct:
    """SQLite: the statement for `n` spans, bound per call (`c0`, `l0`, `h0`, ...): built once per
    shape, not once per turn (a turn reads up to `RECENT_CHATS` spans), run on the driver."""
    ranges = or_(
        false(),
        *(
            and_(
                Message.session_id == bindparam(f"c{i}"),
                Message.seq.between(bindparam(f"l{i}", type_=Integer()), bindparam(f"h{i}", type_=Integer())),
            )
            for i in range(n)
        ),
    )
    return Direct(
        select(type_coerce(Message.session_id, String), *window_columns(True))
        .select_from(Message)
        .join(ChatSession, Message.session_id == ChatSession.id)
        .join(User, User.id == ChatSession.user_id)
        .where(*chats_of(no_project), *RECALLABLE, ranges)
        .order_by(ChatSession.created_at, Message.session_id, Message.seq)
    )
