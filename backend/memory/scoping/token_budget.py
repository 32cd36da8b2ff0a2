"""`token_budget`: the newest messages that fit the budget, whole, in one read."""

from __future__ import annotations

from typing import ClassVar

from backend.memory.scoping.base import (
    ScopingContext,
    ScopingResult,
    group_units,
    newest_units_within,
    older_than_window,
    orphan_receipt,
    receipt_for,
    register_strategy,
    to_scoped,
)
from backend.tokens import MESSAGE_OVERHEAD

MIN_MESSAGE_TOKENS = MESSAGE_OVERHEAD + 1
"""No message costs less (overhead plus a role token), so budget // this bounds how many can fit."""


def fetch_limit(budget: int, cap: int) -> int:
    """How many recent messages one read needs to be sure the budget is filled."""
    return max(1, min(cap, budget // MIN_MESSAGE_TOKENS + 1))


@register_strategy
class TokenBudgetStrategy:
    """The newest whole units that fit `ctx.budget`; never splits a message or a tool exchange."""

    name: ClassVar[str] = "token_budget"

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        window = await ctx.history.recent(fetch_limit(ctx.budget, ctx.settings.history_scan_limit))
        units, orphans = group_units(window)
        kept, dropped = newest_units_within(units, ctx.budget, ctx.counter)
        result = ScopingResult(to_scoped(kept), strategy=self.name)
        result.included = receipt_for(kept, ctx.counter, "newest that fit the budget")
        result.excluded = (
            older_than_window(
                window[0].seq if window else ctx.history.latest_seq + 1, "over the conversation budget"
            )
            + receipt_for(dropped, ctx.counter, "over the conversation budget")
            + orphan_receipt(orphans)
        )
        return result
