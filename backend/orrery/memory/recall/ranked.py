"""Ranking recall's candidates for one turn with the one relevance ranking
(`backend/orrery/memory/scoping/ranking.py`): every part (a chat's run of messages) taken as one
corpus, lexical (BM25 with the pooled statistics) and dense z-scored over all their messages and
summed, neighbours lifted within a run, boosts for the same focus and project, and the best units
above average offered."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from orrery.memory.recall.queries import ChatInfo, Scope
from orrery.memory.scoping.base import HistoryMessage
from orrery.memory.scoping.dense import DenseTurn, embed_query
from orrery.memory.scoping.ranking import fuse, standardized_over
from orrery.memory.scoping.window import Corpus, HistoryWindow
from orrery.text import analyze

ENTITY_BOOST = 0.5
"""Standard deviations added to units of a chat focused on the same entity as this chat."""
PROJECT_BOOST = 0.5
"""Standard deviations added to units of a chat in this chat's project when other projects count."""
OFFERED = 200
"""The best units above average offered to the budget (a cap fills long before; the rest are counted)."""


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
    """The best units above average, best first, and what the receipt should say about the rest."""

    offered: list[Offered] = field(default_factory=list)
    considered: int = 0
    """Units ranked."""
    related: int = 0
    """Units above average (the offered ones and those past `OFFERED`)."""
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


@dataclass
class Part:
    """A run of one chat's messages as a window: a process's copy of the newest part of a chat, or
    the neighbourhoods of full-text matches (read for this turn only)."""

    chat: ChatInfo
    window: HistoryWindow
    kept: bool = False


def units_of(parts: Sequence[Part]) -> tuple[Any, list[int], list[tuple[Part, int, int]]]:
    """Over all parts' rows taken as one: each unit's first row, the unit indices where a run (a
    part, or a gap in one) starts, and each unit as (part, first, end) rows of its window. Tool
    results whose call was not read belong to no unit."""
    import numpy as np

    starts: list[Any] = []
    breaks: list[int] = []
    units: list[tuple[Part, int, int]] = []
    offset = 0
    for part in parts:
        window = part.window
        if not len(window):
            continue
        tool = np.asarray(window.is_tool, dtype=bool)
        seqs = np.fromiter((m.seq for m in window.messages), dtype=np.int64, count=len(window))
        gap = np.ones(len(window), dtype=bool)
        gap[1:] = seqs[1:] != seqs[:-1] + 1
        run = np.cumsum(gap)
        first = np.flatnonzero(~tool)
        if not len(first):
            offset += len(window)
            continue
        # a unit ends at the next unit's first row or where its run ends, whichever comes first
        run_end = np.searchsorted(run, run[first], side="right")
        nxt = np.append(first[1:], len(window))
        end = np.minimum(nxt, run_end)
        new_run = np.ones(len(first), dtype=bool)
        new_run[1:] = run[first[1:]] != run[first[:-1]]
        breaks.extend(int(b) + len(units) for b in np.flatnonzero(new_run))
        starts.append(first + offset)
        units.extend((part, int(a), int(b)) for a, b in zip(first, end, strict=True))
        offset += len(window)
    return (np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)), breaks, units


async def rank_parts(parts: Sequence[Part], request: RecallRequest, turn: DenseTurn) -> RecallPool:
    """Rank every unit of the parts for the query as one corpus; the best above average first."""
    import numpy as np

    starts, breaks, units = units_of(parts)
    if not units or not request.query:
        return RecallPool(status="no earlier message to recall")
    terms = analyze(request.query)
    corpus = Corpus.pooled([p.window.corpus(terms) for p in parts])
    lexical = np.zeros(sum(len(p.window) for p in parts))
    offset = 0
    for part in parts:
        for row, score in part.window.scores(terms, corpus=corpus).items():
            lexical[offset + row] = score
        offset += len(part.window)
    dense = await _dense(parts, request.query, turn)
    head = int(starts[0])
    ranking = fuse(lexical[head:], dense[head:] if dense is not None else None, list(starts - head), breaks)
    mixed = any(p.chat.project_id != request.scope.project_id for p in parts)
    boosts = np.asarray([_boost(part.chat, request, mixed) for part, _, _ in units])
    scores = np.asarray(ranking.scores) + boosts
    above = np.flatnonzero(scores > 0)
    best = above[np.argsort(-scores[above], kind="stable")]
    offered = []
    for k in best:
        part, first, end = units[k]
        unit = part.window.messages[first:end]
        if _whole(unit, part.chat):
            offered.append(Offered(part.chat, unit, float(scores[k]), ranking.own[k], float(boosts[k])))
        if len(offered) == OFFERED:
            break
    return RecallPool(offered, len(units), len(above), notes=list(turn.notes))


async def _dense(parts: Sequence[Part], query: str, turn: DenseTurn) -> Any:
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
        else:  # einsum, not BLAS (see `scoping/ranking.py`)
            sims.append(np.einsum("ij,j->i", vectors, query_vector).astype(np.float64))
            has.extend(part.window.with_vectors())
    return standardized_over(np.concatenate(sims), has)


def _boost(chat: ChatInfo, request: RecallRequest, mixed: bool) -> float:
    """The same focused entity; the same project, when chats of other projects are candidates too."""
    boost = ENTITY_BOOST if request.focus is not None and chat.focus == request.focus else 0.0
    return boost + (PROJECT_BOOST if mixed and chat.project_id == request.scope.project_id else 0.0)


def _whole(unit: Sequence[HistoryMessage], chat: ChatInfo) -> bool:
    """A call whose results were not read (at a run's end) is left out: units are whole or not at all."""
    return not (unit[0].has_tool_calls and len(unit) == 1 and unit[-1].seq < chat.message_count)
