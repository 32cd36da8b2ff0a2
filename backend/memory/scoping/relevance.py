"""`relevance`: the recent window, plus the older messages most related to the current user message.

Hybrid ranking, fused by reciprocal rank (no hand-tuned score weights):
1. lexical: BM25 over each message's stored search terms (the shared analyzer's stems, written once
   with the message), with this session's own statistics, from the window's inverted index;
2. dense: cosine similarity of stored message embeddings to the query's (a local model shipped in
   its wheel, see `backend/memory/embeddings.py`; lexical only when it is absent);
3. expansion for multi-hop questions: names and numbers from the best lexical hits are searched
   again (pseudo-relevance feedback), at half weight;
4. neighbours: the units next to the strongest hits (a question and its answer sit side by side)
   inherit most of their score.
Units (a message and its tool results) are kept or dropped whole; chosen units go in best-first
while the budget lasts, then everything is put back in chronological order. Costs come from the
counts stored with each message. The window (see `backend/memory/scoping/window.py`) is kept by the
process between turns, so a turn reads only its new messages and ranks over arrays.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import ClassVar, overload

from backend.memory.scoping.base import (
    HistoryMessage,
    ReceiptItem,
    ScopingContext,
    ScopingResult,
    message_tokens,
    older_than_window,
    register_strategy,
)
from backend.memory.scoping.candidates import SessionArchive, searchable
from backend.memory.scoping.dated import DatedPacker, date_receipt, session_day
from backend.memory.scoping.window import HistoryWindow
from backend.text import analyze

RRF_K = 60
CANDIDATES = 100
"""Lexical and dense candidates taken from each ranking."""
ARCHIVE_CANDIDATES = 20
"""Messages older than the window (long sessions) taken from the database's full-text search."""
ARCHIVE_TOOL_RESULTS = 3
"""Tool results read after an archived match to keep its unit whole (a longer run is left out)."""
EXPANSION_HITS = 3
EXPANSION_WEIGHT = 0.5
NEIGHBOUR_HITS = 5
NEIGHBOUR_SHARE = 0.9
_SALIENT = re.compile(r"(?<=[a-z,;:] )[A-Z][\w'-]+|\d[\d:.,]*")
"""Capitalised words inside a sentence (names, places, titles) and numbers."""


class Units(Sequence[Sequence[HistoryMessage]]):
    """The window's units (a message and the tool results after it), sliced only when looked at."""

    def __init__(
        self, messages: Sequence[HistoryMessage], starts: list[int], ends: list[int] | None = None
    ) -> None:
        self.messages, self.starts = messages, starts
        self.ends = ends if ends is not None else [*starts[1:], len(messages)][: len(starts)]

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, i: int) -> Sequence[HistoryMessage]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Sequence[HistoryMessage]]: ...
    def __getitem__(self, i: int | slice) -> Sequence[HistoryMessage] | Sequence[Sequence[HistoryMessage]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self.messages[self.starts[i] : self.ends[i]]

    def key(self, i: int) -> str:
        first, last = self.messages[self.starts[i]].seq, self.messages[self.ends[i] - 1].seq
        return f"seq {first}" if first == last else f"seq {first}-{last}"

    def of_row(self, row: int) -> int:
        """The unit holding the message at `row` (rows before the first unit are not asked)."""
        return bisect_right(self.starts, row) - 1


def _rrf(ranking: Sequence[int], weight: float, into: dict[int, float]) -> None:
    for rank, row in enumerate(ranking):
        into[row] = into.get(row, 0.0) + weight / (RRF_K + rank + 1)


async def _dense_ranking(query: str, window: HistoryWindow, start: int, end: int) -> list[int]:
    """Rows in `[start, end)` by cosine similarity to the query, best first (those with a vector)."""
    from backend.memory.embeddings import get_embedder

    vectors = window.vectors()
    embedder = await get_embedder() if vectors is not None and query and end > start else None
    if embedder is None or vectors is None:
        return []
    import numpy as np

    # einsum, not BLAS: a threaded BLAS spins its threads for this small product and costs more CPU
    sims = np.einsum("ij,j->i", vectors[start:end], embedder.embed([query])[0])
    sims[~np.asarray(window.with_vectors()[start:end], dtype=bool)] = -np.inf
    k = min(CANDIDATES, len(sims))
    top = np.argpartition(-sims, k - 1)[:k]
    top = top[np.argsort(-sims[top], kind="stable")]
    return [start + int(i) for i in top if np.isfinite(sims[i])]


def _expansion(window: HistoryWindow, hits: Sequence[int], query_terms: set[str], end: int) -> list[int]:
    if not hits:
        return []
    texts = " ".join(window.messages[i].content for i in hits[:EXPANSION_HITS])
    extra = [t for t in analyze(" ".join(_SALIENT.findall(texts))) if t not in query_terms]
    return window.search(extra, CANDIDATES, before=end) if extra else []


async def rank_units(ctx: ScopingContext, window: HistoryWindow, units: Units, split: int) -> list[float]:
    """Fused relevance of each of the first `split` units to the query (0 when nothing points at it)."""
    if not split or not ctx.query:
        return [0.0] * split
    start, end = units.starts[0], units.ends[split - 1]
    terms = analyze(ctx.query)
    lexical = [i for i in window.search(terms, CANDIDATES, before=end) if i >= start]
    fused: dict[int, float] = {}
    _rrf(lexical, 1.0, fused)
    _rrf(await _dense_ranking(ctx.query, window, start, end), 1.0, fused)
    _rrf([i for i in _expansion(window, lexical, set(terms), end) if i >= start], EXPANSION_WEIGHT, fused)
    scores = [0.0] * split
    for row, score in fused.items():
        unit = units.of_row(row)
        scores[unit] = max(scores[unit], score)
    strongest = sorted((i for i in range(split) if scores[i] > 0), key=lambda i: -scores[i])[:NEIGHBOUR_HITS]
    for i in strongest:
        for j in (i - 1, i + 1):
            if 0 <= j < split:
                scores[j] = max(scores[j], NEIGHBOUR_SHARE * scores[i])
    return scores


async def _archive(
    ctx: ScopingContext, src: object, window: HistoryWindow
) -> tuple[list[list[HistoryMessage]], list[float]]:
    """Units older than the window whose message the database's full-text index matches, with
    their fused score (lexical rank only). A unit is whole — the message and the tool results after
    it — or left out (a matching tool result alone, or a call whose results run past what was read)."""
    terms = analyze(ctx.query) if ctx.query else []
    if not isinstance(src, SessionArchive) or not terms or window.first_seq <= 1:
        return [], []
    seqs = await src.search(terms, ARCHIVE_CANDIDATES, before_seq=window.first_seq)
    if not seqs:
        return [], []
    near = {s + k for s in seqs for k in range(ARCHIVE_TOOL_RESULTS + 1) if s + k < window.first_seq}
    by_seq = {m.seq: m for m in await src.fetch(sorted(near))}
    units: list[list[HistoryMessage]] = []
    scores: list[float] = []
    taken: set[int] = set()
    for rank, seq in sorted(enumerate(seqs), key=lambda pair: pair[1]):
        first = by_seq.get(seq)
        if first is None or first.role == "tool" or seq in taken:
            continue
        unit, nxt = [first], seq + 1
        while nxt in by_seq and by_seq[nxt].role == "tool":
            unit.append(by_seq[nxt])
            nxt += 1
        runs_on = window.is_tool[0] if nxt == window.first_seq else nxt - seq > ARCHIVE_TOOL_RESULTS
        if nxt not in by_seq and runs_on:
            continue  # its results run on into the window or past what was read: not whole
        taken.update(m.seq for m in unit)
        units.append(unit)
        scores.append(1.0 / (RRF_K + rank + 1))
    return units, scores


@register_strategy
class RelevanceStrategy:
    """Recent window verbatim; older units ranked by hybrid relevance to the current user message."""

    name: ClassVar[str] = "relevance"

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        src = searchable(ctx.history)
        async with src.window(ctx.settings.history_scan_limit) as window:
            return await self._select(ctx, src, window)

    async def _select(self, ctx: ScopingContext, src: object, window: HistoryWindow) -> ScopingResult:
        messages = window.messages
        orphans = next((i for i, tool in enumerate(window.is_tool) if not tool), len(messages))
        units = Units(messages, [i for i in range(orphans, len(messages)) if not window.is_tool[i]])
        prefix = list(accumulate(window.costs(ctx.counter), initial=0))
        unit_costs = [prefix[b] - prefix[a] for a, b in zip(units.starts, units.ends, strict=True)]
        recent_n = max(0, int(ctx.options.get("recent_window", ctx.settings.relevance_recent_window)))
        split = max(0, len(units) - recent_n)
        scores = await rank_units(ctx, window, units, split)
        far, far_scores = await _archive(ctx, src, window)
        if far:  # older units go first, in order
            flat = [m for unit in far for m in unit]
            bounds = list(accumulate((len(unit) for unit in far), initial=0))
            units = Units(
                [*flat, *messages],
                [*bounds[:-1], *(s + len(flat) for s in units.starts)],
                [*bounds[1:], *(e + len(flat) for e in units.ends)],
            )
            unit_costs = [sum(message_tokens(m, ctx.counter) for m in unit) for unit in far] + unit_costs
            scores, split = far_scores + scores, split + len(far)
        packer = DatedPacker(units, unit_costs, ctx.budget, ctx.counter, session_day(messages))
        for i in range(len(units) - 1, split - 1, -1):  # the recent window, newest first, contiguous
            if not packer.try_add(i):
                break
        over: list[ReceiptItem] = []
        for i in sorted((i for i in range(split) if scores[i] > 0), key=lambda i: (-scores[i], -i)):
            if not packer.try_add(i):
                key = units.key(i)
                over.append(ReceiptItem("message", key, unit_costs[i], "relevant but over budget", scores[i]))
        result = ScopingResult(packer.messages({i: units[i] for i in packer.chosen}), strategy=self.name)
        kept = set(packer.chosen)
        result.included = [
            ReceiptItem(
                "message",
                units.key(i),
                unit_costs[i],
                "relevant" if i < split else "recent window",
                scores[i] if i < split else None,
            )
            for i in packer.chosen
        ]
        markers = packer.used - sum(unit_costs[i] for i in kept)
        if markers:
            result.included += date_receipt(markers)
        unrelated = sum(1 for i in range(split) if scores[i] <= 0)
        window_end = ctx.history.latest_seq + 1
        result.excluded = (
            older_than_window(
                messages[0].seq if messages else window_end,
                "beyond the scan limit"
                + (" (full-text matches considered; those kept are listed as included)" if far else ""),
            )
            + [
                ReceiptItem("message", f"seq {m.seq}", None, "tool result whose call is outside the window")
                for m in messages[:orphans]
            ]
            + [
                ReceiptItem("message", units.key(i), unit_costs[i], "over the conversation budget")
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
