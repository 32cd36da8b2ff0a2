"""What recall may offer on one turn: the person's earlier messages most related to the current one,
ranked by the one relevance ranking (`backend/orrery/memory/scoping/ranking.py`).

The candidates are bounded whatever the number of chats: the messages of the newest recallable
chats (the same project's first) up to `DENSE_SCAN`, whose stored vectors are all scored, plus the
database's full-text matches in older chats with their neighbours. They are read in at most three
queries (the chats, the matches when older chats exist, the messages) and ranked over arrays:
lexical and dense z-scored over the candidates and summed, neighbours lifted within a chat, then
a chat focused on the same entity as this one gains `ENTITY_BOOST` and, when other projects may be
recalled, one in this chat's project `PROJECT_BOOST`. Units (a message and its tool results)
scoring above the candidates' average are offered best-first.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.memory.embedding_models import EmbeddingModel, embedding_model
from orrery.memory.embeddings import DIMENSIONS
from orrery.memory.history import append_rows, database_key
from orrery.memory.history_cache import CachedWindow, history_cache
from orrery.memory.recall.queries import ChatInfo, Scope, matching, read_spans, recent_chats
from orrery.memory.scoping.base import HistoryMessage
from orrery.memory.scoping.dense import DenseTurn, embed_query
from orrery.memory.scoping.ranking import NEIGHBOUR_HOPS, fuse, standardized_over
from orrery.memory.scoping.window import Corpus, HistoryWindow
from orrery.text import analyze

RECENT_CHATS = 40
"""The newest recallable chats read in the first query (their titles, sizes and focus)."""
DENSE_SCAN = 2000
"""Messages of the newest chats whose stored vectors are scored each turn (the bounded dense pass;
as many as a chat's own history window holds)."""
MATCHES = 40
"""Full-text matches taken from chats older than the dense pass, each read with its neighbours."""
SPAN_AFTER = NEIGHBOUR_HOPS + 3
"""Messages read after a match: its neighbours and the tool results that keep a unit whole."""
ENTITY_BOOST = 0.5
"""Standard deviations added to units of a chat focused on the same entity as this chat."""
PROJECT_BOOST = 0.5
"""Standard deviations added to units of a chat in this chat's project when other projects count."""


@dataclass(frozen=True)
class Offered:
    """A unit recall may use: its chat, messages, score (after neighbours and boosts) and what made it."""

    chat: ChatInfo
    messages: Sequence[HistoryMessage]
    score: float
    own: float
    """Its best message's score before neighbours lifted it."""
    boost: float = 0.0


@dataclass
class RecallPool:
    """The units above average, best first, and what the receipt should say about the rest."""

    offered: list[Offered] = field(default_factory=list)
    considered: int = 0
    """Units ranked (the offered ones and those not above average)."""
    status: str = ""
    """Why nothing was offered, when nothing was: recall off, no earlier chat, no message to answer."""
    notes: list[str] = field(default_factory=list)
    queries: int = 0


@dataclass(frozen=True)
class RecallRequest:
    """Whom recall answers (the caller), in which chat (excluded; its project and focus), and what."""

    scope: Scope
    focus: tuple[str, uuid.UUID] | None
    query: str | None


async def gather(session: AsyncSession, request: RecallRequest, settings: Settings) -> RecallPool:
    """The ranked units recall may offer for `request` (constant queries: see the module doc)."""
    if not request.query or not request.query.strip():
        return RecallPool(status="no user message to recall for")
    on, chats = await recent_chats(session, request.scope, RECENT_CHATS)
    if not on:
        return RecallPool(
            status="off: recall across chats is turned off in the person's memory settings", queries=1
        )
    if not chats:
        return RecallPool(status="no earlier chat may be recalled", queries=1)
    model = embedding_model(settings)
    reads = _Reads(database_key(session), model.name)
    full = reads.plan(chats)
    queries = 1
    by_id = {c.id: c for c in chats}
    if len(full) < len(chats) or len(chats) == RECENT_CHATS:  # older chats exist: their matches
        queries += 1
        for chat, seq in await matching(session, request.scope, analyze(request.query), full, MATCHES):
            by_id.setdefault(chat.id, chat)
            reads.match(chat, seq)
    if reads.spans:
        queries += 1
        reads.add_rows(await read_spans(session, request.scope, reads.spans), by_id)
    try:
        pool = await _rank(reads.parts(), request, model)
    finally:
        reads.keep()
    pool.queries = queries
    return pool


@dataclass
class _Part:
    """A run of one chat's messages as a window: a process's copy of the newest part of a chat, or
    the neighbourhood of a full-text match (read for this turn only)."""

    chat: ChatInfo
    window: HistoryWindow
    kept: bool = False


class _Reads:
    """Which messages a turn needs and where they come from: the process's copies of the newest
    chats while their stamp matches, else one read with the full-text matches' neighbourhoods."""

    def __init__(self, database: str, model: str) -> None:
        self.database, self.model = database, model
        self.held: list[_Part] = []
        self.spans: list[tuple[uuid.UUID, int, int]] = []
        self.stale: dict[uuid.UUID, tuple[ChatInfo, int]] = {}
        self.lows: dict[uuid.UUID, int] = {}

    def _key(self, chat: ChatInfo) -> tuple[str, str, uuid.UUID, str]:
        return (self.database, "recall", chat.id, self.model)

    def plan(self, chats: Sequence[ChatInfo]) -> list[uuid.UUID]:
        """Take the newest chats up to `DENSE_SCAN` messages; returns the chats taken whole."""
        full: list[uuid.UUID] = []
        room = DENSE_SCAN
        for chat in chats:
            if room <= 0:
                break
            lo = max(1, chat.message_count - room + 1)
            room -= chat.message_count - lo + 1
            self.lows[chat.id] = lo
            full += [chat.id] if lo == 1 else []
            entry = history_cache.take(self._key(chat))
            if entry is not None and entry.epoch == (*chat.stamp, lo):
                self.held.append(_Part(chat, entry.window, kept=True))
            else:
                self.stale[chat.id] = (chat, lo)
                self.spans.append((chat.id, lo, chat.message_count))
        return full

    def match(self, chat: ChatInfo, seq: int) -> None:
        """Read a full-text match with its neighbours (never what the newest part already holds)."""
        hi = min(seq + SPAN_AFTER, self.lows.get(chat.id, seq + SPAN_AFTER + 1) - 1)
        if hi >= seq:
            self.spans.append((chat.id, max(1, seq - NEIGHBOUR_HOPS), hi))

    def add_rows(self, rows: Sequence[Any], chats: dict[uuid.UUID, ChatInfo]) -> None:
        """Split the read rows into runs per chat: a stale chat's newest part (kept for later turns)
        and the matches' neighbourhoods."""
        start = 0
        for i in range(1, len(rows) + 1):
            if i < len(rows) and rows[i][0] == rows[start][0]:
                continue
            chat_id = uuid.UUID(str(rows[start][0]))
            group = rows[start:i]
            stale = self.stale.get(chat_id)
            lo = stale[1] if stale else None
            old = [r[1:] for r in group if lo is None or r[1] < lo]
            new = [r[1:] for r in group if lo is not None and r[1] >= lo]
            if old:
                self.held.append(_Part(chats[chat_id], _window(old, self.model)))
            if new and stale is not None:
                self.held.append(_Part(stale[0], _window(new, self.model), kept=True))
                self.stale.pop(chat_id)
            start = i
        for chat, _ in self.stale.values():  # read and found empty: nothing recallable
            self.held.append(_Part(chat, _window([], self.model), kept=True))

    def parts(self) -> list[_Part]:
        """Every run, chats oldest first, each chat's runs in seq order."""
        return sorted(self.held, key=lambda p: (p.chat.created_at, str(p.chat.id), p.window.first_seq))

    def keep(self) -> None:
        """Give the chats' copies back to the process (their stamp says when they are stale)."""
        for part in self.held:
            if part.kept:
                lo = self.lows[part.chat.id]
                history_cache.put(self._key(part.chat), CachedWindow((*part.chat.stamp, lo), part.window))


def _window(rows: Sequence[Any], model: str) -> HistoryWindow:
    window = HistoryWindow(DIMENSIONS, model)
    append_rows(window, rows)
    return window


def _units(parts: Sequence[_Part]) -> tuple[list[int], list[int], list[tuple[_Part, int, int]]]:
    """Over all parts' rows taken as one: each unit's first row, the unit indices where a run (a
    part, or a gap in one) starts, and each unit as (part, first, end) rows of its window. Tool
    results whose call was not read belong to no unit."""
    starts: list[int] = []
    breaks: list[int] = []
    units: list[tuple[_Part, int, int]] = []
    offset = 0
    for part in parts:
        window = part.window
        run_starts = True
        for i, message in enumerate(window.messages):
            if i and window.messages[i - 1].seq + 1 != message.seq:
                run_starts = True
            if window.is_tool[i]:
                if not run_starts and units:
                    units[-1] = (units[-1][0], units[-1][1], i + 1)
                continue
            if run_starts:
                breaks.append(len(starts))
                run_starts = False
            starts.append(offset + i)
            units.append((part, i, i + 1))
        offset += len(window)
    return starts, breaks, units


async def _rank(parts: Sequence[_Part], request: RecallRequest, model: EmbeddingModel) -> RecallPool:
    """Rank every unit of the parts for the query as one corpus; those above average, best first."""
    starts, breaks, units = _units(parts)
    if not units or not request.query:
        return RecallPool(status="no earlier message to recall")
    import numpy as np

    terms = analyze(request.query)
    corpus = Corpus.pooled([p.window.corpus(terms) for p in parts])
    lexical = np.zeros(sum(len(p.window) for p in parts))
    offset = 0
    for part in parts:
        for row, score in part.window.scores(terms, corpus=corpus).items():
            lexical[offset + row] = score
        offset += len(part.window)
    turn = DenseTurn(model)
    dense = await _dense(parts, request.query, turn)
    ranking = fuse(
        lexical[starts[0] :],
        dense[starts[0] :] if dense is not None else None,
        [s - starts[0] for s in starts],
        breaks,
    )
    chats = [p.chat for p in parts]
    mixed = any(c.project_id != request.scope.project_id for c in chats)
    offered = []
    for k, (part, first, end) in enumerate(units):
        boost = _boost(part.chat, request, mixed)
        unit = part.window.messages[first:end]
        if ranking.scores[k] + boost > 0 and _whole(unit, part.chat):
            offered.append(Offered(part.chat, unit, ranking.scores[k] + boost, ranking.own[k], boost))
    offered.sort(key=lambda o: (-o.score, -o.messages[0].seq))
    return RecallPool(offered, len(units), notes=list(turn.notes))


async def _dense(parts: Sequence[_Part], query: str, turn: DenseTurn) -> Any:
    """Standardised similarity of every row to the query over all parts (None: no vectors, or no
    query vector in time)."""
    import numpy as np

    with_vectors = [p.window for p in parts if p.window.vectors() is not None]
    if not with_vectors:
        return None
    probe = HistoryWindow(with_vectors[0].dimensions, turn.model.name)
    probe.dense = turn
    query_vector = await embed_query(probe, query)
    if query_vector is None:
        return None
    sims, has = [], []
    for part in parts:
        vectors = part.window.vectors()
        if vectors is None or vectors.shape[1] != query_vector.shape[0]:
            sims.append(np.zeros(len(part.window), dtype=np.float64))
            has.extend([False] * len(part.window))
        else:
            sims.append(np.einsum("ij,j->i", vectors, query_vector).astype(np.float64))
            has.extend(part.window.with_vectors())
    return standardized_over(np.concatenate(sims), has)


def _boost(chat: ChatInfo, request: RecallRequest, mixed: bool) -> float:
    """The same focused entity; the same project, when chats of other projects are candidates too."""
    boost = ENTITY_BOOST if request.focus is not None and chat.focus == request.focus else 0.0
    return boost + (PROJECT_BOOST if mixed and chat.project_id == request.scope.project_id else 0.0)


def _whole(unit: Sequence[HistoryMessage], chat: ChatInfo) -> bool:
    """A unit whose call's results may run past what was read (at a span's end) is left out."""
    last = unit[-1]
    return not (unit[0].has_tool_calls and len(unit) == 1 and last.seq < chat.message_count)
