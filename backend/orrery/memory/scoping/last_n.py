"""`last_n`: the last N messages (per-agent N), optionally filtered, never over the budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from orrery.memory.scoping.base import (
    HistoryMessage,
    ReceiptItem,
    ScopingContext,
    ScopingResult,
    group_units,
    older_than_window,
    orphan_receipt,
    receipt_for,
    register_strategy,
)
from orrery.memory.scoping.dated import date_receipt, newest_dated, session_day
from orrery.vocabulary import AGENT_IDS

DEFAULT_MAX_MESSAGES: dict[str, int] = {
    "coach": 10,
    "goal_architect": 10,
    "pattern_analyst": 5,
    "motivator": 5,
    "accountability_partner": 10,
    "planner": 10,
}
assert set(DEFAULT_MAX_MESSAGES) == set(AGENT_IDS)

MessageFilter = Callable[[HistoryMessage], bool]


def max_messages_for(agent: str, override: object = None) -> int:
    """N for an agent: an explicit override, else the agent's default, else 10."""
    if isinstance(override, int) and override > 0:
        return override
    return DEFAULT_MAX_MESSAGES.get(agent, 10)


@register_strategy
class LastNStrategy:
    """The newest N messages (`options["max_messages"]`), with an optional `options["filter"]`."""

    name: ClassVar[str] = "last_n"

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        n = max_messages_for(ctx.agent, ctx.options.get("max_messages"))
        keep: MessageFilter | None = ctx.options.get("filter")
        window = await ctx.history.recent(ctx.settings.history_scan_limit if keep else n)
        filtered = [m for m in window if keep(m)] if keep else window
        skipped = [m for m in window if keep and not keep(m)]
        units, orphans = group_units(filtered)
        chosen: list[list[HistoryMessage]] = []
        count = 0
        for unit in reversed(units):  # newest first, whole units, at most n messages
            if count + len(unit) > n:
                break
            chosen.insert(0, unit)
            count += len(unit)
        beyond_n = units[: len(units) - len(chosen)]
        messages, kept_at, markers = newest_dated(chosen, ctx.budget, ctx.counter, session_day(window))
        fitted, over_budget = chosen[len(chosen) - len(kept_at) :], chosen[: len(chosen) - len(kept_at)]
        result = ScopingResult(messages, strategy=self.name)
        result.included = receipt_for(fitted, ctx.counter, f"among the last {n}") + date_receipt(markers)
        result.excluded = (
            older_than_window(
                window[0].seq if window else ctx.history.latest_seq + 1, f"older than the last {n}"
            )
            + receipt_for(beyond_n, ctx.counter, f"older than the last {n}")
            + receipt_for(over_budget, ctx.counter, "over the conversation budget")
            + orphan_receipt(orphans)
            + [_filtered(m) for m in skipped]
        )
        return result


def _filtered(message: HistoryMessage) -> ReceiptItem:
    return ReceiptItem("message", f"seq {message.seq}", None, "removed by the relevance filter")
