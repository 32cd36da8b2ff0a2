"""Dates on scoped messages, counted by the budget.

Rule (one for every strategy): a message carries its date as a compact `[2025-03-14] ` prefix when
its day differs from the message shown before it, or, for the first one shown, from the day of the
session's newest message ("today" of the conversation). So messages picked out of order
(relevance) or across a day boundary always say when they were written, and a same-day chat pays
nothing. Messages without a timestamp carry none.

`DatedPacker` adds whole units in a strategy's priority order and keeps the exact cost of the
markers the current selection needs, so a selection with its markers never exceeds the budget.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from functools import lru_cache
from typing import Protocol

from orrery.memory.scoping.base import (
    HistoryMessage,
    ReceiptItem,
    ScopedMessage,
    message_tokens,
    unit_tokens,
)
from orrery.tokens import TokenCounter


class Dated(Protocol):
    """Anything with a timestamp: a stored message or its outline."""

    @property
    def created_at(self) -> datetime | None: ...


def marker(day: date) -> str:
    """The date prefix of a message."""
    return f"[{day.isoformat()}] "


@lru_cache(maxsize=4096)
def _marker_tokens(counter: TokenCounter, day: date) -> int:
    return counter.count(marker(day))


def _day(message: Dated | None) -> date | None:
    return message.created_at.date() if message is not None and message.created_at else None


class DatedPacker:
    """Chooses units (by index into chronological `units`) within `budget`, markers included."""

    def __init__(
        self,
        units: Sequence[Sequence[Dated]],
        costs: Sequence[int],
        budget: int,
        counter: TokenCounter,
        today: date | None = None,
    ) -> None:
        self.units, self.costs, self.budget, self.counter = units, costs, budget, counter
        self.today = today
        self.chosen: list[int] = []
        self.added: list[int] = []
        self.used = 0
        self.most_saved = 0
        """The largest marker a chosen unit carries, at most: the most adding a unit can save (it
        can only drop the marker of the chosen unit after it), so a cheap test refuses most units
        that cannot fit once the budget is full."""

    def _marker_cost(self, message: Dated, previous: Dated | None) -> int:
        day = _day(message)
        if day is None or day == (_day(previous) if previous is not None else self.today):
            return 0
        return _marker_tokens(self.counter, day)

    def _delta(self, index: int) -> int:
        at = bisect.bisect(self.chosen, index)
        before = self.units[self.chosen[at - 1]][-1] if at > 0 else None
        after = self.units[self.chosen[at]][0] if at < len(self.chosen) else None
        unit = self.units[index]
        delta = self.costs[index] + self._marker_cost(unit[0], before)
        if after is not None:
            delta += self._marker_cost(after, unit[-1]) - self._marker_cost(after, before)
        return delta

    def try_add(self, index: int) -> bool:
        """Add the unit if it fits with the markers it brings; False (and no change) if not."""
        if self.used + self.costs[index] - self.most_saved > self.budget:
            return False  # even dropping the largest marker could not make room
        delta = self._delta(index)
        if self.used + delta > self.budget:
            return False
        bisect.insort(self.chosen, index)
        self.added.append(index)
        self.used += delta
        day = _day(self.units[index][0])
        if day is not None:
            self.most_saved = max(self.most_saved, _marker_tokens(self.counter, day))
        return True

    def messages(self, texts: Mapping[int, Sequence[HistoryMessage]]) -> list[ScopedMessage]:
        """The chosen units (their messages from `texts`, by unit index) as dated messages; if
        joining a marker to a text ever tokenizes longer than its parts, the last-added units are
        given back until the whole fits."""
        while True:
            originals = [m for i in self.chosen for m in texts[i]]
            out = dated_messages([texts[i] for i in self.chosen], self.today)
            used = sum(  # stored counts for untouched messages; only dated ones are counted again
                message_tokens(m, self.counter)
                if shown["content"] is m.content
                else self.counter.count_message(shown["role"], shown["content"])
                for m, shown in zip(originals, out, strict=True)
            )
            if used <= self.budget or not self.added:
                self.used = used
                return out
            self.chosen.remove(self.added.pop())


def dated_messages(units: Sequence[Sequence[HistoryMessage]], today: date | None) -> list[ScopedMessage]:
    """Role and content, chronological, with the date markers of the rule above."""
    out: list[ScopedMessage] = []
    previous: Dated | None = None
    for unit in units:
        for i, m in enumerate(unit):
            day = _day(m)
            before = _day(previous) if previous is not None else today
            prefix = marker(day) if i == 0 and day is not None and day != before else ""
            out.append(ScopedMessage(role=m.role, content=prefix + m.content if prefix else m.content))
            previous = m
    return out


def cost_of(messages: Sequence[ScopedMessage], counter: TokenCounter) -> int:
    """What scoped messages cost in the prompt (the final check every strategy's output passes)."""
    return sum(counter.count_message(m["role"], m["content"]) for m in messages)


def session_day(messages: Sequence[Dated]) -> date | None:
    """The conversation's "today": the day of its newest message."""
    return _day(messages[-1]) if messages else None


def newest_dated(
    units: Sequence[Sequence[HistoryMessage]], budget: int, counter: TokenCounter, today: date | None
) -> tuple[list[ScopedMessage], list[int], int]:
    """The newest whole units that fit `budget` with their date markers: (messages, indices of the
    kept units, tokens the markers cost)."""
    costs = [unit_tokens(u, counter) for u in units]
    packer = DatedPacker(units, costs, budget, counter, today)
    for i in range(len(units) - 1, -1, -1):
        if not packer.try_add(i):
            break
    messages = packer.messages({i: units[i] for i in packer.chosen})
    return messages, packer.chosen, packer.used - sum(costs[i] for i in packer.chosen)


def date_receipt(tokens: int) -> list[ReceiptItem]:
    """The receipt line for the date markers a selection carries (none when it needs none)."""
    return [ReceiptItem("dates", "date markers", tokens, "when the messages were written")] if tokens else []
