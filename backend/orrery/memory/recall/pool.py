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
from orrery.memory.embedding_models import embedding_model
from orrery.memory.embeddings import DIMENSIONS
from orrery.memory.history import append_rows
from orrery.memory.recall.queries import ChatInfo, Scope, matching, read_spans, recent_chats
from orrery.memory.scoping.base import HistoryMessage
from orrery.memory.scoping.dense import DenseTurn
from orrery.memory.scoping.ranking import NEIGHBOUR_HOPS, Units, rank
from orrery.memory.scoping.window import HistoryWindow
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
    spans, full = _dense_spans(chats)
    queries = 2
    by_id = {c.id: c for c in chats}
    if len(full) < len(chats) or len(chats) == RECENT_CHATS:  # older chats exist: their matches
        queries += 1
        found = await matching(session, request.scope, analyze(request.query), full, MATCHES)
        for chat, seq in found:
            by_id.setdefault(chat.id, chat)
            spans.append((chat.id, max(1, seq - NEIGHBOUR_HOPS), seq + SPAN_AFTER))
    rows = await read_spans(session, request.scope, spans)
    pool = await _rank(rows, by_id, request, settings)
    pool.queries = queries
    return pool


def _dense_spans(chats: Sequence[ChatInfo]) -> tuple[list[tuple[uuid.UUID, int, int]], list[uuid.UUID]]:
    """The newest chats' messages up to `DENSE_SCAN` (a chat's newest part when it is the one that
    overflows), and the chats read whole."""
    spans: list[tuple[uuid.UUID, int, int]] = []
    full: list[uuid.UUID] = []
    room = DENSE_SCAN
    for chat in chats:
        if room <= 0:
            break
        lo = max(1, chat.message_count - room + 1)
        spans.append((chat.id, lo, chat.message_count))
        room -= chat.message_count - lo + 1
        if lo == 1:
            full.append(chat.id)
    return spans, full


def _units(rows: Sequence[Any], window: HistoryWindow) -> tuple[Units, list[int], list[uuid.UUID]]:
    """Units over the read rows, the unit indices where a run (a chat, or a gap in one) starts, and
    each unit's chat. Tool results whose call was not read belong to no unit."""
    starts: list[int] = []
    ends: list[int] = []
    breaks: list[int] = []
    chats: list[uuid.UUID] = []
    previous: tuple[Any, int] | None = None
    run_starts = False
    for i, message in enumerate(window.messages):
        chat = rows[i][0]
        new_run = previous != (chat, message.seq - 1)
        run_starts = run_starts or new_run
        if len(ends) < len(starts) and (new_run or not window.is_tool[i]):
            ends.append(i)
        if not window.is_tool[i]:
            if run_starts:
                breaks.append(len(starts))
                run_starts = False
            starts.append(i)
            chats.append(chat)
        previous = (chat, message.seq)
    if len(ends) < len(starts):
        ends.append(len(window.messages))
    return Units(window.messages, starts, ends), breaks, chats


async def _rank(
    rows: Sequence[Any], chats: dict[uuid.UUID, ChatInfo], request: RecallRequest, settings: Settings
) -> RecallPool:
    """Rank the read rows' units for the query; those above average, best first."""
    if not rows:
        return RecallPool(status="no earlier message to recall")
    model = embedding_model(settings)
    window = HistoryWindow(DIMENSIONS, model.name)
    turn = DenseTurn(model)
    window.dense = turn
    append_rows(window, [row[1:] for row in rows])
    units, breaks, unit_chats = _units(rows, window)
    ranking = await rank(request.query, window, units, breaks)
    mixed = any(c.project_id != request.scope.project_id for c in chats.values())
    offered = []
    for k, score in enumerate(ranking.scores):
        chat = chats[unit_chats[k]]
        boost = _boost(chat, request, mixed)
        if score + boost > 0 and _whole(units[k], chat):
            offered.append(Offered(chat, units[k], score + boost, ranking.own[k], boost))
    offered.sort(key=lambda o: (-o.score, -o.messages[0].seq))
    return RecallPool(offered, len(units), notes=list(turn.notes))


def _boost(chat: ChatInfo, request: RecallRequest, mixed: bool) -> float:
    """The same focused entity; the same project, when chats of other projects are candidates too."""
    boost = ENTITY_BOOST if request.focus is not None and chat.focus == request.focus else 0.0
    return boost + (PROJECT_BOOST if mixed and chat.project_id == request.scope.project_id else 0.0)


def _whole(unit: Sequence[HistoryMessage], chat: ChatInfo) -> bool:
    """A unit whose call's results may run past what was read (at a span's end) is left out."""
    last = unit[-1]
    return not (unit[0].has_tool_calls and len(unit) == 1 and last.seq < chat.message_count)
