"""`token_budget`: the newest messages that fit the budget, whole, in one read."""

from __future__ import annotations

from typing import ClassVar

from orrery.memory.scoping.base import (
    ScopingContext,
    ScopingResult,
    group_units,
    older_than_window_counted,
    orphan_receipt,
    receipt_for,
    register_strategy,
)
from orrery.memory.scoping.dated import date_receipt, newest_dated, session_day
from orrery.tokens import MESSAGE_OVERHEAD

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
        messages, kept_at, markers = newest_dated(units, ctx.budget, ctx.counter, session_day(window))
        kept, dropped = units[len(units) - len(kept_at) :], units[: len(units) - len(kept_at)]
        result = ScopingResult(messages, strategy=self.name)
        result.included = receipt_for(kept, ctx.counter, "newest that fit the budget") + date_receipt(markers)
        result.excluded = (
            await older_than_window_counted(
                ctx.history,
                window[0].seq if window else ctx.history.latest_seq + 1,
                "over the conversation budget",
                ctx.counter,
            )
            + receipt_for(dropped, ctx.counter, "over the conversation budget")
            + orphan_receipt(orphans)
        )
        return result
