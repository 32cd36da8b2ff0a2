"""The summary keeps facts: salient sentences per day, validated output, inside tiny budgets."""

from __future__ import annotations

import pytest

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.evaluation.harness import evaluate, resolve_strategies
from orrery.memory.salience import validated_summary
from orrery.memory.scoping import ScopedMessage
from orrery.memory.summaries import SUMMARY_INSTRUCTIONS, ExtractiveSummarizer
from orrery.tokens import counter_for
from tests.evaluation.test_harness import tiny_dataset

COUNTER = counter_for("offline")
CHAT = [
    ScopedMessage(role="user", content="[2025-03-14] Morning! Slept badly again, nothing new really."),
    ScopedMessage(role="assistant", content="Sorry to hear that. What would make today easier?"),
    ScopedMessage(
        role="user", content="Big news: we adopted Biscuit, a retired greyhound, for £120 on Saturday."
    ),
    ScopedMessage(role="assistant", content="Congratulations! How are the kids taking it?"),
    ScopedMessage(role="user", content="[2025-03-20] Thanks, talk soon. It was a nice chat anyway."),
    ScopedMessage(role="user", content="I signed the contract with Fenwick Labs, I start in May."),
]


async def test_extractive_summary_keeps_facts_per_day_not_pleasantries() -> None:
    summary = await ExtractiveSummarizer(COUNTER).summarize(None, CHAT, 70)
    assert COUNTER.count(summary) <= 70
    assert "greyhound" in summary and "Fenwick Labs" in summary
    assert "Slept badly" not in summary and "talk soon" not in summary
    rows = summary.splitlines()[1:]
    assert rows[0].startswith("[2025-03-14] User: Big news") and rows[1].startswith(
        "[2025-03-20] User: I signed"
    )


async def test_running_summary_re_ranks_old_lines_with_new_ones() -> None:
    summarizer = ExtractiveSummarizer(COUNTER)
    first = await summarizer.summarize(None, CHAT[:4], 70)
    second = await summarizer.summarize(first, CHAT[4:], 70)
    assert "greyhound" in second and "Fenwick Labs" in second and COUNTER.count(second) <= 70


@pytest.mark.parametrize("budget", [0, 3, 8, 12, 17, 25])
async def test_summaries_fit_any_budget(budget: int) -> None:
    summary = await ExtractiveSummarizer(COUNTER).summarize(None, CHAT, budget)
    assert COUNTER.count(summary) <= budget


def test_model_output_is_validated() -> None:
    with pytest.raises(ValueError, match="empty"):
        validated_summary("  \n", 50, COUNTER)
    long = "\n".join(
        [
            "[2025-03-14] User: Hello there, lovely weather, thanks again for the chat today.",
            "[2025-03-15] User: Priya moved to Lyon on 3 April for £2,000 a month.",
        ]
        * 5
    )
    fitted = validated_summary(long, 30, COUNTER)
    assert COUNTER.count(fitted) <= 30 and "Lyon" in fitted
    assert COUNTER.count(validated_summary("free text " * 40, 10, COUNTER)) <= 10
    assert "names, dates, numbers" in SUMMARY_INSTRUCTIONS and "[2025-03-14]" in SUMMARY_INSTRUCTIONS


async def test_summary_strategy_stays_inside_tiny_budgets(db: Database, settings: Settings) -> None:
    budgets = [0, 5, 8, 11, 14, 17, 20, 25, 40, 80]
    rows = await evaluate(
        db,
        tiny_dataset(),
        settings.model_copy(update={"summary_keep_recent": 1}),
        resolve_strategies(["summary"]),
        budgets,
    )
    for row in rows:
        data = row.as_dict()
        assert data["tokens_max"] <= data["budget"], data
    summary_80 = next(r for r in rows if r.strategy == "summary" and r.budget == 80).as_dict()
    assert (
        summary_80["facts_kept"] == 1.0 and summary_80["recall"] == 0.0
    )  # kept in the summary, not verbatim
