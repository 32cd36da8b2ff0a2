"""`lexical_baseline`: plain BM25 over every turn, best first within the budget, then chronological.

The yardstick the harness always runs next to the real strategies: no recent window, no recency,
no embeddings, no expansion. Not registered for chat use; it exists to be beaten.
"""

from __future__ import annotations

from typing import ClassVar

from backend.memory.scoping.base import (
    ScopingContext,
    ScopingResult,
    group_units,
    receipt_for,
    to_scoped,
    unit_tokens,
)
from backend.text import analyze, bm25_scores


class LexicalBaseline:
    """BM25 over all units of the session, best-first while the budget lasts."""

    name: ClassVar[str] = "lexical_baseline"

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        window = await ctx.history.recent(ctx.settings.history_scan_limit)
        units, _ = group_units(window)
        scores = bm25_scores(
            analyze(ctx.query or ""), [analyze(" ".join(m.content for m in u)) for u in units]
        )
        remaining = ctx.budget
        chosen: list[int] = []
        for i in sorted(range(len(units)), key=lambda i: (-scores[i], -i)):
            if scores[i] <= 0:
                break
            cost = unit_tokens(units[i], ctx.counter)
            if cost <= remaining:
                chosen.append(i)
                remaining -= cost
        picked = [units[i] for i in sorted(chosen)]
        result = ScopingResult(to_scoped(picked), strategy=self.name)
        result.included = receipt_for(picked, ctx.counter, "BM25 match")
        return result
