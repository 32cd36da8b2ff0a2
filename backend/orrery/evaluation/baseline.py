"""The two frozen yardsticks the harness always runs next to the real strategies.

`lexical_baseline`: BM25 (k1 1.5) over the shared analyzer's stems of every unit; `plain_bm25`: the
benchmark's own yardstick, Okapi BM25 (k1 1.2, b 0.75) over lowercase words without stop words, no
stemming. Both rank every unit of the session before the current message, take them best first
while the budget lasts, then put them back in chronological order: no recent window, no recency,
no embeddings, no expansion, no dates. Neither is registered for chat use; they exist to be beaten,
and they are never tuned. `PlainBM25.choose` is also the control `orrery eval memory` packs into
the earlier-chats budget, over all of a person's earlier messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from orrery.memory.scoping.base import (
    ScopingContext,
    ScopingResult,
    group_units,
    receipt_for,
    to_scoped,
    unit_tokens,
)
from orrery.text import analyze, bm25_scores, tokenize


class LexicalBaseline:
    """BM25 over the stems of all units of the session, best-first while the budget lasts."""

    name: ClassVar[str] = "lexical_baseline"
    words: ClassVar[Callable[[str], list[str]]] = staticmethod(analyze)
    k1: ClassVar[float] = 1.5

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        window = await ctx.history.recent(ctx.settings.history_scan_limit)
        if window and window[-1].role == "user" and window[-1].content == ctx.query:
            window = window[:-1]  # the question itself is the query, not a candidate
        units, _ = group_units(window)
        words = type(self).words
        chosen = self.choose(
            words(ctx.query or ""),
            [words(" ".join(m.content for m in u)) for u in units],
            lambda i: unit_tokens(units[i], ctx.counter),
            ctx.budget,
        )
        picked = [units[i] for i in chosen]
        result = ScopingResult(to_scoped(picked), strategy=self.name)
        result.included = receipt_for(picked, ctx.counter, "BM25 match")
        return result

    @classmethod
    def choose(
        cls, query: Sequence[str], documents: Sequence[Sequence[str]], cost: Callable[[int], int], budget: int
    ) -> list[int]:
        """The documents (as words) matching `query` taken best first (ties: the later one) while
        `budget` lasts, each at `cost(i)`, skipping any that no longer fits; indexes in order."""
        scores = bm25_scores(query, documents, k1=cls.k1)
        remaining = budget
        chosen: list[int] = []
        for i in sorted(range(len(documents)), key=lambda i: (-scores[i], -i)):
            if scores[i] <= 0:
                break
            price = cost(i)
            if price <= remaining:
                chosen.append(i)
                remaining -= price
        return sorted(chosen)


class PlainBM25(LexicalBaseline):
    """The benchmark's yardstick: Okapi BM25 (k1 1.2, b 0.75), words without stop words, no stems."""

    name: ClassVar[str] = "plain_bm25"
    words: ClassVar[Callable[[str], list[str]]] = staticmethod(tokenize)
    k1: ClassVar[float] = 1.2
