"""`relevance`: the agent's last N messages verbatim, plus the older messages most related to the
current user message — every built-in agent's default.

The recent window is the agent's N (`max_messages`), counted as `last_n` counts it (whole units,
newest first), so switching from `last_n` loses nothing recent. What fell outside it is ranked by
one score, fused at score level (no rank fusion, no hand-set per-signal weights):
1. lexical: BM25 over each message's stored search terms (the shared analyzer's stems, written once
   with the message), with this session's own statistics, from the window's inverted index;
2. dense: cosine similarity of stored message embeddings to the query's (a local model shipped in
   its wheel, see `backend/orrery/memory/embeddings.py`; lexical only for messages without one);
each standardised over the session's older messages (z-scores) and summed, so each signal counts by
how unusual a message is under it, whatever its scale;
3. neighbours: a unit within two turns of a strong one scores at most two standard deviations per
   turn below it (a question names the topic, the reply or the one after it holds the detail).
The scoring is `backend/orrery/memory/scoping/ranking.py`, which recall from earlier chats uses too.
Units scoring above the session's average are recalled best-first while the budget lasts; units
(a message and its tool results) are kept or dropped whole, then everything is put back in
chronological order with dated markers. Costs come from the counts stored with each message. The
window (see `backend/orrery/memory/scoping/window.py`) is kept by the process between turns, so a turn
reads only its new messages and ranks over arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Any, ClassVar

from orrery.memory.scoping.base import (
    HistoryMessage,
    ReceiptItem,
    ScopingContext,
    ScopingResult,
    message_tokens,
    older_than_window,
    register_strategy,
)
from orrery.memory.scoping.candidates import SessionArchive, searchable
from orrery.memory.scoping.dated import DatedPacker, date_receipt, session_day
from orrery.memory.scoping.last_n import max_messages_for
from orrery.memory.scoping.ranking import Units
from orrery.memory.scoping.ranking import rank as rank_by_relevance
from orrery.memory.scoping.window import HistoryWindow
from orrery.text import analyze

ARCHIVE_CANDIDATES = 20
"""Messages older than the window (long sessions) taken from the database's full-text search."""
ARCHIVE_TOOL_RESULTS = 3
"""Tool results read after an archived match to keep its unit whole (a longer run is left out)."""
ARCHIVE_SCORE = 1.0
"""An archived full-text match ranks as a unit one standard deviation above average, in its order."""
RECENT_SHARE = 0.5
"""The recent window takes at most half the conversation budget (the newest unit always, if it fits),
so long replies never leave recall without room."""
RECALLED = "recalled: relevant to the current message"
LISTED_OVER_BUDGET = 20
"""Related units that did not fit, named one by one in the receipt; the rest are counted in one line."""


async def rank_units(ctx: ScopingContext, window: HistoryWindow, units: Units) -> list[float]:
    """Fused relevance of each unit to the query, in standard deviations above the session's
    average (the one ranking of `scoping/ranking.py`)."""
    return (await rank_by_relevance(ctx.query, window, units)).scores


def recent_messages(ctx: ScopingContext) -> int:
    """N, the newest messages kept verbatim: an explicit `recent_window` option, else
    `ORRERY_RELEVANCE_RECENT_WINDOW`, else the agent's `max_messages` (as `last_n` reads it)."""
    explicit: Any = ctx.options.get("recent_window", ctx.settings.relevance_recent_window)
    if explicit is not None:
        try:
            return max(0, int(explicit))
        except (TypeError, ValueError):
            return 0
    return max_messages_for(ctx.agent, ctx.options.get("max_messages"))


def recent_split(units: Units, n: int) -> int:
    """Index of the first unit of the recent window: the newest whole units holding at most `n`
    messages (as `last_n` counts them)."""
    split, count = len(units), 0
    while split > 0:
        size = units.ends[split - 1] - units.starts[split - 1]
        if count + size > n:
            break
        count += size
        split -= 1
    return split


async def _archive(
    ctx: ScopingContext, src: object, window: HistoryWindow
) -> tuple[list[list[HistoryMessage]], list[float]]:
    """Units older than the window whose message the database's full-text index matches, with
    their fused score (lexical rank only). A unit is whole — the message and the tool results after
    it — or left out (a matching tool result alone, or a call whose results run past what was read)."""
    terms = analyze(ctx.query) if ctx.query else []
    if not isinstance(src, SessionArchive) or not terms or window.first_seq <= 1:
        return [], []
    held = window.corpus(terms)  # each word's share of the window: how common it is in the chat
    rates = {t: df / (held.messages or 1) for t, df in held.frequencies.items()}
    seqs = await src.search(terms, ARCHIVE_CANDIDATES, before_seq=window.first_seq, rates=rates)
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
        scores.append(ARCHIVE_SCORE - rank / (10 * ARCHIVE_CANDIDATES))
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
        costs = [prefix[b] - prefix[a] for a, b in zip(units.starts, units.ends, strict=True)]
        recent_n = recent_messages(ctx)
        offer = _Offer(units, costs, await rank_units(ctx, window, units), recent_split(units, recent_n))
        far, far_scores = await _archive(ctx, src, window)
        if far:
            offer = offer.after_archived(far, far_scores, ctx)
        packer = DatedPacker(offer.units, offer.costs, ctx.budget, ctx.counter, session_day(messages))
        cut, over = offer.pack(packer, ctx.budget)
        result = ScopingResult(
            packer.messages({i: offer.units[i] for i in packer.chosen}), strategy=self.name
        )
        result.included = offer.included(packer, cut, recent_n)
        scanned_from = messages[0].seq if messages else ctx.history.latest_seq + 1
        result.excluded = (
            older_than_window(
                scanned_from,
                "beyond the scan limit"
                + (" (full-text matches considered; those kept are listed as included)" if far else ""),
            )
            + [
                ReceiptItem("message", f"seq {m.seq}", None, "tool result whose call is outside the window")
                for m in messages[:orphans]
            ]
            + offer.left_out(packer, over)
        )
        return result


@dataclass
class _Offer:
    """The units on offer, oldest first, with their costs and scores; those from `split` on are the
    recent window (kept verbatim while its share of the budget lasts)."""

    units: Units
    costs: list[int]
    scores: list[float]
    split: int

    def after_archived(
        self, far: list[list[HistoryMessage]], far_scores: list[float], ctx: ScopingContext
    ) -> _Offer:
        """The archive's full-text matches go first (they are older than the window), in order."""
        flat = [m for unit in far for m in unit]
        bounds = list(accumulate((len(unit) for unit in far), initial=0))
        units = Units(
            [*flat, *self.units.messages],
            [*bounds[:-1], *(s + len(flat) for s in self.units.starts)],
            [*bounds[1:], *(e + len(flat) for e in self.units.ends)],
        )
        costs = [sum(message_tokens(m, ctx.counter) for m in unit) for unit in far] + self.costs
        return _Offer(units, costs, far_scores + self.scores, self.split + len(far))

    def pack(self, packer: DatedPacker, budget: int) -> tuple[int, list[ReceiptItem]]:
        """Fill `packer`: the newest units within the recent share, then related older units
        best-first, then the rest of the recent window. Returns where the recent window kept starts
        (`cut`) and the related units that did not fit."""
        costs, scores, split = self.costs, self.scores, self.split
        recent_budget = max(budget * RECENT_SHARE, costs[-1] if costs else 0)
        cut = len(self.units)
        while cut > split and packer.used + costs[cut - 1] <= recent_budget and packer.try_add(cut - 1):
            cut -= 1  # the recent window, newest first, contiguous, within its share
        chosen = set(packer.chosen)  # the recent window's units (none of those below is among them)
        over: list[int] = []
        for i in sorted((i for i in range(cut) if scores[i] > 0), key=lambda i: (-scores[i], -i)):
            if i not in chosen and not packer.try_add(i) and i < split:
                over.append(i)
        while cut > split and (cut - 1 in packer.chosen or packer.try_add(cut - 1)):
            cut -= 1  # what is left of the budget goes on to the rest of the recent window
        return cut, self._over_budget(over)

    def _over_budget(self, over: list[int]) -> list[ReceiptItem]:
        """Related units that did not fit, best first: the best `LISTED_OVER_BUDGET` by name, the
        rest as one line (a long session has hundreds; the receipt stays the same size)."""
        reason = RECALLED + ", over budget"
        items = [
            ReceiptItem("message", self.units.key(i), self.costs[i], reason, self.scores[i])
            for i in over[:LISTED_OVER_BUDGET]
        ]
        rest = over[LISTED_OVER_BUDGET:]
        if rest:
            tokens = sum(self.costs[i] for i in rest)
            items.append(ReceiptItem("messages", f"{len(rest)} more related units", tokens, reason))
        return items

    def included(self, packer: DatedPacker, cut: int, recent_n: int) -> list[ReceiptItem]:
        """What was kept and why (recalled, with its score, or recent), then the date markers' cost."""
        items = [
            ReceiptItem(
                "message",
                self.units.key(i),
                self.costs[i],
                RECALLED if i < cut else f"recent: among the last {recent_n} messages",
                self.scores[i] if i < cut else None,
            )
            for i in packer.chosen
        ]
        markers = packer.used - sum(self.costs[i] for i in set(packer.chosen))
        return items + (date_receipt(markers) if markers else [])

    def left_out(self, packer: DatedPacker, over: list[ReceiptItem]) -> list[ReceiptItem]:
        """Recent units the budget could not hold, related ones that did not fit, and a count of the
        older units not related enough to be considered."""
        kept = set(packer.chosen)
        unrelated = sum(1 for i in range(self.split) if self.scores[i] <= 0)
        return (
            [
                ReceiptItem("message", self.units.key(i), self.costs[i], "over the conversation budget")
                for i in range(self.split, len(self.units))
                if i not in kept
            ]
            + over
            + (
                [ReceiptItem("messages", f"{unrelated} older units", None, "not above average relevance")]
                if unrelated
                else []
            )
        )
