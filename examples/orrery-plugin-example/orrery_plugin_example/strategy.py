"""`decisions_first`: the newest messages plus older ones that record a decision, within budget."""

from __future__ import annotations

import re
from typing import ClassVar

from orrery.memory.scoping import ScopingContext, ScopingResult
from orrery.memory.scoping.base import (
    ReceiptItem,
    Unit,
    group_units,
    orphan_receipt,
    to_scoped,
    unit_key,
    unit_tokens,
)

DECISION = re.compile(r"\b(decided|decision|agreed|we will|going with)\b", re.IGNORECASE)


class DecisionsFirst:
    """Keep the newest messages and every older one that records a decision, within the budget."""

    name: ClassVar[str] = "decisions_first"
    recent_units: ClassVar[int] = 4

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        window = await ctx.history.recent(ctx.settings.history_scan_limit)  # one query
        units, orphans = group_units(window)
        recent = units[-self.recent_units :] if self.recent_units else []
        older = units[: len(units) - len(recent)]
        wanted = [(u, "recent") for u in reversed(recent)]
        wanted += [(u, "records a decision") for u in reversed(older) if _decides(u)]
        kept: dict[int, tuple[Unit, str]] = {}
        used = 0
        excluded: list[ReceiptItem] = []
        for unit, reason in wanted:  # newest first; whole units only
            cost = unit_tokens(unit, ctx.counter)
            if used + cost > ctx.budget:
                excluded.append(ReceiptItem("message", unit_key(unit), cost, "over the conversation budget"))
                continue
            kept[unit[0].seq] = (unit, reason)
            used += cost
        chosen = [kept[seq] for seq in sorted(kept)]
        result = ScopingResult(to_scoped([u for u, _ in chosen]), strategy=self.name)
        result.included = [
            ReceiptItem("message", unit_key(u), unit_tokens(u, ctx.counter), why) for u, why in chosen
        ]
        skipped = [u for u in older if u[0].seq not in kept and not _decides(u)]
        result.excluded = (
            excluded
            + [ReceiptItem("message", unit_key(u), None, "older and records no decision") for u in skipped]
            + orphan_receipt(orphans)
        )
        return result


def _decides(unit: Unit) -> bool:
    return any(DECISION.search(m.content) for m in unit)
