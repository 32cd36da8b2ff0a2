"""Scoped messages carry their date when they cross a day boundary or come from an earlier day."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from orrery.memory.scoping import ScopingContext, get_strategy
from orrery.memory.scoping.base import HistoryMessage
from tests.support.history import COUNTER, ListHistory, scoping_context

DAY1 = datetime(2025, 3, 14, 9, tzinfo=UTC)


class DatedHistory(ListHistory):
    """Messages with timestamps: `days[i]` days after DAY1 for message i."""

    def __init__(self, texts: list[tuple[str, str]], days: list[int]) -> None:
        super().__init__(texts)
        self.messages = [
            HistoryMessage(m.seq, m.role, m.content, created_at=DAY1 + timedelta(days=d, minutes=m.seq))
            for m, d in zip(self.messages, days, strict=True)
        ]


def ctx(history: ListHistory, budget: int, query: str | None = None) -> ScopingContext:
    return scoping_context(history, budget=budget, query=query)


def cost(messages: list[Any]) -> int:
    return sum(COUNTER.count_message(m["role"], m["content"]) for m in messages)


TWO_DAYS = [
    ("user", "Morning, the boiler broke again."),
    ("assistant", "Oh no. Did you call someone?"),
    ("user", "The plumber comes on Friday."),
    ("assistant", "Good. Anything else today?"),
]


async def test_token_budget_marks_each_day_it_crosses() -> None:
    history = DatedHistory(TWO_DAYS, [0, 0, 1, 1])
    result = await get_strategy("token_budget").select(ctx(history, 500))
    contents = [m["content"] for m in result.messages]
    assert contents[0] == "[2025-03-14] Morning, the boiler broke again."
    assert contents[1] == "Oh no. Did you call someone?"
    assert contents[2] == "[2025-03-15] The plumber comes on Friday."
    assert contents[3] == "Good. Anything else today?"
    dates = [i for i in result.included if i.kind == "dates"]
    assert dates and dates[0].tokens == cost(result.messages) - cost(
        [{"role": m.role, "content": m.content} for m in history.messages]
    )


async def test_same_day_conversation_has_no_markers() -> None:
    history = DatedHistory(TWO_DAYS, [1, 1, 1, 1])
    result = await get_strategy("token_budget").select(ctx(history, 500))
    assert [m["content"] for m in result.messages] == [t for _, t in TWO_DAYS]
    assert not any(i.kind == "dates" for i in result.included)


@pytest.mark.parametrize("name", ["last_n", "token_budget", "relevance", "summary"])
async def test_markers_are_counted_at_every_budget(name: str) -> None:
    from orrery.memory.summaries import ExtractiveSummarizer

    texts = [
        ("user" if i % 2 == 0 else "assistant", f"Day note {i}: the plumber and the boiler.")
        for i in range(24)
    ]
    history = DatedHistory(texts, [i // 3 for i in range(24)])
    for budget in range(0, 260, 9):
        c = ctx(history, budget, query="When is the plumber coming for the boiler?")
        c.summarizer = ExtractiveSummarizer(COUNTER)
        result = await get_strategy(name).select(c)
        assert cost(result.messages) <= budget, (name, budget)
        days = [m["content"][:12] for m in result.messages if m["content"].startswith("[2025-")]
        if len({m["content"] for m in result.messages}) > 3:
            assert days, (name, budget)


async def test_relevance_dates_an_older_day_it_picks() -> None:
    texts = [("user", "We adopted a greyhound called Biscuit.")] + [
        ("assistant" if i % 2 == 0 else "user", f"Unrelated chat about the weather, part {i}.")
        for i in range(12)
    ]
    history = DatedHistory(texts, [0] + [5] * 12)
    result = await get_strategy("relevance").select(ctx(history, 400, query="What breed is Biscuit?"))
    assert result.messages[0]["content"] == "[2025-03-14] We adopted a greyhound called Biscuit."
    assert any(i.kind == "dates" and i.tokens for i in result.included)


@pytest.mark.parametrize("seed", range(30))
def test_the_packers_quick_refusal_changes_no_choice(seed: int) -> None:
    """`try_add` refuses at once a unit that cannot fit even if it dropped the largest marker a
    chosen unit carries: random units, days and budgets choose exactly what the full check chooses."""
    import random

    from orrery.memory.scoping.dated import DatedPacker

    rng = random.Random(seed)
    days = [None if rng.random() < 0.2 else d for d in sorted(rng.choice(range(6)) for _ in range(40))]
    units = [
        [HistoryMessage(i + 1, "user", "x", created_at=None if d is None else DAY1 + timedelta(days=d))]
        for i, d in enumerate(days)
    ]
    costs = [rng.randint(1, 30) for _ in units]
    order = rng.sample(range(len(units)), len(units))
    budget, today = rng.randint(0, 400), (DAY1 + timedelta(days=rng.randint(0, 6))).date()

    def chosen(quick: bool) -> tuple[list[int], int]:
        packer = DatedPacker(units, costs, budget, COUNTER, today)
        for i in order:
            if not quick:
                packer.most_saved = 10**9  # the quick test never refuses
            packer.try_add(i)
        return packer.chosen, packer.used

    assert chosen(True) == chosen(False)
