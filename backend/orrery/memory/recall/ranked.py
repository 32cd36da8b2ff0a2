"""Ranking recall's candidates for one turn with the one relevance ranking
(`backend/orrery/memory/scoping/ranking.py`): every part (a chat's run of messages) taken as one
corpus, lexical (BM25 with the pooled statistics) and dense z-scored over all their messages and
summed, neighbours lifted within a run, boosts for the same focus and project, and the best units
above average offered."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from orrery.memory.recall.latest import PAIRED, Mark, mark_latest
from orrery.memory.recall.queries import ChatInfo, Scope
from orrery.memory.scoping.base import HistoryMessage
from orrery.memory.scoping.dense import DenseTurn, embed_query
from orrery.memory.scoping.ranking import fuse, standardized_over
from orrery.memory.scoping.window import Corpus, HistoryWindow
from orrery.text import analyze

ENTITY_BOOST = 0.5
"""Standard deviations added to units of a chat focused on the same entity as this chat."""
PERSON_BOOST = 1.0
"""Standard deviations added to the person's own messages when the question is about the person."""
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
    terms: Sequence[str] = ()
    """Its messages' stored search terms (space-separated, `orrery.text.analyze`'s), for the receipt."""
    mark: Mark | None = None
    """Its relation to another offered unit on the same subject (`latest.py`): superseded, differs."""
    part: tuple[int, int] | None = None
    """(k, n): the unit is passage k of its message's n (`passages.py`); None: the whole unit."""


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


@dataclass(frozen=True)
class Units:
    """Every unit of the parts taken as one: its first row over all parts (`starts`), the unit
    indices where a run (a part, or a gap in one) starts, and per unit its part and its rows
    `[first, end)` in that part's window."""

    starts: Any
    breaks: list[int]
    part: Any
    first: Any
    end: Any


def _rows(window: HistoryWindow) -> tuple[Any, Any, Any]:
    """A window's seqs, tool flags and user flags as arrays, derived once per window until it is extended (a
    chat's held window grows by the chat's new messages)."""
    import numpy as np

    cached = window.derived.get("recall_rows")
    if cached is None:
        seqs = np.fromiter((m.seq for m in window.messages), dtype=np.int64, count=len(window))
        person = np.fromiter((m.role == "user" for m in window.messages), dtype=bool, count=len(window))
        cached = window.derived["recall_rows"] = (seqs, np.asarray(window.is_tool, dtype=bool), person)
    return cached


def units_of(parts: Sequence[Part]) -> Units:
    """The units of all parts, as arrays (see `Units`), worked out over all parts' rows at once. A
    run ends at a gap in seqs or at a part's end; a unit ends at the next unit's first row or at its
    run's end. Tool results whose call was not read belong to no unit."""
    import numpy as np

    sizes = np.asarray([len(p.window) for p in parts], dtype=np.int64)
    total = int(sizes.sum()) if len(parts) else 0
    if not total:
        empty = np.zeros(0, dtype=np.int64)
        return Units(empty, [], empty, empty, empty)
    rows = [_rows(p.window) for p in parts]
    seqs = np.concatenate([r[0] for r in rows])
    tool = np.concatenate([r[1] for r in rows])
    offsets = np.cumsum(sizes) - sizes
    gap = np.ones(total, dtype=bool)
    gap[1:] = seqs[1:] != seqs[:-1] + 1
    gap[offsets[sizes > 0]] = True  # a part starts a run
    run = np.cumsum(gap)
    starts = np.flatnonzero(~tool)
    if not len(starts):
        empty = np.zeros(0, dtype=np.int64)
        return Units(empty, [], empty, empty, empty)
    ends = np.minimum(np.append(starts[1:], total), np.searchsorted(run, run[starts], side="right"))
    new_run = np.ones(len(starts), dtype=bool)
    new_run[1:] = run[starts[1:]] != run[starts[:-1]]
    part = np.searchsorted(offsets + sizes, starts, side="right")
    return Units(starts, np.flatnonzero(new_run).tolist(), part, starts - offsets[part], ends - offsets[part])


async def rank_parts(parts: Sequence[Part], request: RecallRequest, turn: DenseTurn) -> RecallPool:
    """Rank every unit of the parts for the query as one corpus; the best above average first."""
    import numpy as np

    units = units_of(parts)
    if not len(units.starts) or not request.query:
        return RecallPool(status="no earlier message to recall")
    terms = analyze(request.query)
    corpus = Corpus.pooled([p.window.corpus(terms) for p in parts])
    lexical = np.concatenate([p.window.score_array(terms, corpus) for p in parts])
    dense = await _dense(parts, request.query, turn)
    head = int(units.starts[0])
    starts = units.starts - head
    ranking = fuse(lexical[head:], dense[head:] if dense is not None else None, starts, units.breaks)
    mixed = any(p.chat.project_id != request.scope.project_id for p in parts)
    boosts = np.asarray([_boost(p.chat, request, mixed) for p in parts])[units.part]
    if about_the_person(request.query):
        said = np.concatenate([_rows(p.window)[2] for p in parts])
        boosts = boosts + PERSON_BOOST * said[units.starts]
    scores = np.asarray(ranking.scores) + boosts
    above = np.flatnonzero(scores > 0)
    offered: list[Offered] = []
    vectors: list[Any] = []
    for k in above[np.argsort(-scores[above], kind="stable")]:
        p = parts[units.part[k]]
        first, end = units.first[k], units.end[k]
        unit = p.window.messages[first:end]
        if _whole(unit, p.chat):
            terms = p.window.stored_terms(first, end)
            offered.append(Offered(p.chat, unit, float(scores[k]), ranking.own[k], float(boosts[k]), terms))
            vectors.append(_vector(p.window, int(first)) if len(vectors) < PAIRED else None)
        if len(offered) == OFFERED:
            break
    offered = mark_latest(offered, vectors)
    return RecallPool(offered, len(units.starts), len(above), notes=list(turn.notes))


def _vector(window: HistoryWindow, row: int) -> Any:
    """A message's stored embedding (a view, nothing copied), or None."""
    vectors = window.vectors()
    return vectors[row] if vectors is not None and window.with_vectors()[row] else None


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


_SELF = re.compile(r"\b(?:i|i'm|i've|i'd|my|me|mine|myself|we|our|us|ours)\b", re.IGNORECASE)
_YOURS = re.compile(
    r"\b(?:did you|have you"
    r"|you (?:said|told|suggested|recommended|proposed|mentioned|wrote|gave|showed|explained)"
    r"|your (?:answer|suggestion|advice|recommendation|reply|explanation|example|code))\b",
    re.IGNORECASE,
)


def about_the_person(query: str | None) -> bool:
    """Whether a question is about the person (what I said, my plans), not about the assistant's
    own earlier words: then what the person said is the evidence, not replies that repeat its words."""
    return bool(query) and _SELF.search(query or "") is not None and _YOURS.search(query or "") is None


def _boost(chat: ChatInfo, request: RecallRequest, mixed: bool) -> float:
    """The same focused entity; the same project, when chats of other projects are candidates too."""
    boost = ENTITY_BOOST if request.focus is not None and chat.focus == request.focus else 0.0
    return boost + (PROJECT_BOOST if mixed and chat.project_id == request.scope.project_id else 0.0)


def _whole(unit: Sequence[HistoryMessage], chat: ChatInfo) -> bool:
    """A call whose results were not read (at a run's end) is left out: units are whole or not at all."""
    return not (unit[0].has_tool_calls and len(unit) == 1 and unit[-1].seq < chat.message_count)
