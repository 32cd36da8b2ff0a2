"""`relevance`: the recent window, plus older messages that match the current user message.

Older units are scored by BM25 against the query (weight 0.8) and recency (0.2); with an embedder
(`options["embedder"]`) the blend is BM25 0.5, cosine similarity 0.3, recency 0.2. Units with no
lexical or semantic match stay out. Relevant units go in best-first while the budget lasts, then
everything is put back in chronological order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, Protocol

from backend.memory.scoping.base import (
    ReceiptItem,
    ScopingContext,
    ScopingResult,
    Unit,
    group_units,
    newest_units_within,
    older_than_window,
    orphan_receipt,
    receipt_for,
    register_strategy,
    to_scoped,
    unit_key,
    unit_tokens,
)
from backend.text import analyze, bm25_scores

SIMILARITY_FLOOR = 0.35
"""Cosine similarity below which an embedding match does not count as relevant."""


class Embedder(Protocol):
    """Optional semantic signal: one vector per text."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed each text."""
        ...


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


async def score_units(units: Sequence[Unit], query: str, embedder: Embedder | None) -> list[float]:
    """Relevance of each unit to `query` in [0, 1]; 0 means no match at all."""
    if not units:
        return []
    texts = [" ".join(m.content for m in unit) for unit in units]
    lexical = bm25_scores(analyze(query), [analyze(t) for t in texts])
    top = max(lexical) or 1.0
    lexical = [s / top for s in lexical]
    recency = [(i + 1) / len(units) for i in range(len(units))]
    if embedder is None:
        return [0.8 * lx + 0.2 * rc if lx > 0 else 0.0 for lx, rc in zip(lexical, recency, strict=True)]
    vectors = await embedder.embed([query, *texts])
    semantic = [_cosine(vectors[0], v) for v in vectors[1:]]
    return [
        0.5 * lx + 0.3 * max(0.0, sem) + 0.2 * rc if lx > 0 or sem >= SIMILARITY_FLOOR else 0.0
        for lx, sem, rc in zip(lexical, semantic, recency, strict=True)
    ]


@register_strategy
class RelevanceStrategy:
    """Recent window verbatim; older units ranked by relevance to the current user message."""

    name: ClassVar[str] = "relevance"

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        window = await ctx.history.recent(ctx.settings.history_scan_limit)
        units, orphans = group_units(window)
        recent_n = int(ctx.options.get("recent_window", ctx.settings.relevance_recent_window))
        split = max(0, len(units) - recent_n)
        recent, older = units[split:], units[:split]
        recent, recent_dropped = newest_units_within(recent, ctx.budget, ctx.counter)
        remaining = ctx.budget - sum(unit_tokens(u, ctx.counter) for u in recent)
        scores = await score_units(older, ctx.query or "", ctx.options.get("embedder"))
        ranked = sorted(range(len(older)), key=lambda i: (-scores[i], -i))
        chosen: set[int] = set()
        excluded: list[ReceiptItem] = []
        unrelated = 0
        for i in ranked:
            cost = unit_tokens(older[i], ctx.counter)
            if scores[i] <= 0:
                unrelated += 1
            elif cost <= remaining:
                chosen.add(i)
                remaining -= cost
            else:
                excluded.append(
                    ReceiptItem("message", unit_key(older[i]), cost, "relevant but over budget", scores[i])
                )
        picked = [older[i] for i in sorted(chosen)]
        result = ScopingResult(to_scoped(picked + recent), strategy=self.name)
        result.included = [
            ReceiptItem(
                "message", unit_key(older[i]), unit_tokens(older[i], ctx.counter), "relevant", scores[i]
            )
            for i in sorted(chosen)
        ] + receipt_for(recent, ctx.counter, "recent window")
        if unrelated:
            excluded.append(
                ReceiptItem("messages", f"{unrelated} older units", None, "no overlap with the message")
            )
        result.excluded = (
            older_than_window(
                window[0].seq if window else ctx.history.latest_seq + 1, "beyond the scan limit"
            )
            + receipt_for(recent_dropped, ctx.counter, "over the conversation budget")
            + excluded
            + orphan_receipt(orphans)
        )
        return result
