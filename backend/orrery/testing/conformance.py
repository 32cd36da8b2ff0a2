"""`run_strategy_conformance(MyStrategy)`: the contract every message-scoping strategy keeps.

Checked on an empty, a small, a tool-heavy and a huge history, at every budget from 0 up: never over
the budget; a tool call and its results kept or dropped together, never a result alone; the
history's order kept; the same input giving the same output; the user's query never copied into
the messages; a bounded number of history reads. Any failure raises one `AssertionError` listing
every broken rule.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, cast

from orrery.config import Settings
from orrery.memory.scoping.base import MessageScopingStrategy, ScopingContext, ScopingResult, get_strategy
from orrery.memory.summaries import ExtractiveSummarizer, SummaryStore
from orrery.testing.history import MemoryHistory, MemorySummaryStore, tool_conversation
from orrery.tokens import TokenCounter, counter_for

CANARY = "zqxcanary"
"""A word in the query that appears nowhere in the history: finding it in a message is leakage."""
BUDGETS = (*range(0, 33), 40, 50, 64, 80, 100, 128, 160, 200, 256, 400, 800, 2000, 10_000)
HUGE_BUDGETS = (0, 7, 100, 2000, 10_000)
SCAN_LIMIT = 200
"""ORRERY_HISTORY_SCAN_LIMIT during the checks, so the huge history (~700 messages) is far beyond it."""
HISTORIES: dict[str, int] = {"empty": 0, "one turn": 1, "tool calls": 12, "huge": 300}
MAX_READS = 5


@dataclass
class ConformanceReport:
    """What was run and what broke (empty `failures`: the strategy conforms)."""

    strategy: str
    runs: int = 0
    failures: list[str] = field(default_factory=list)


def _settings() -> Settings:
    return Settings(_env_file=None, env="test", secret_key="conformance", history_scan_limit=SCAN_LIMIT)


def _fresh(strategy: type[Any] | str) -> MessageScopingStrategy:
    return get_strategy(strategy) if isinstance(strategy, str) else cast(MessageScopingStrategy, strategy())


async def _run(
    strategy: type[Any] | str, turns: int, budget: int, counter: TokenCounter, agent: str
) -> tuple[ScopingResult, MemoryHistory]:
    history = MemoryHistory(tool_conversation(turns))
    ctx = ScopingContext(
        agent=agent,
        session_id=uuid.UUID(int=turns + 1),
        history=history,
        query=f"What did we decide about the checklist {CANARY}?",
        budget=budget,
        counter=counter,
        settings=_settings(),
        summaries=cast(SummaryStore, MemorySummaryStore()),
        summarizer=ExtractiveSummarizer(counter),
    )
    return await _fresh(strategy).select(ctx), history


def _check(result: ScopingResult, history: MemoryHistory, budget: int, counter: TokenCounter) -> list[str]:
    problems: list[str] = []
    used = sum(counter.count_message(m["role"], m["content"]) for m in result.messages)
    if used > budget:
        problems.append(f"{used} tokens of messages over a budget of {budget}")
    by_content = {m.content: m for m in history.messages}
    picked = [by_content[m["content"]] for m in result.messages if m["content"] in by_content]
    seqs = [m.seq for m in picked]
    if seqs != sorted(seqs) or len(set(seqs)) != len(seqs):
        problems.append(f"messages out of chronological order or repeated: seq {seqs}")
    chosen = set(seqs)
    for index, message in enumerate(history.messages):
        if message.role == "tool" and message.seq in chosen:
            call = next(m for m in reversed(history.messages[:index]) if m.role != "tool")
            if call.seq not in chosen:
                problems.append(f"tool result seq {message.seq} sent without its call seq {call.seq}")
        if message.role != "tool" and message.seq in chosen:
            results = []
            for later in history.messages[index + 1 :]:
                if later.role != "tool":
                    break
                results.append(later.seq)
            if not set(results) <= chosen:
                problems.append(f"call seq {message.seq} sent without all of its results {results}")
    if any(CANARY in m["content"].lower() for m in result.messages):
        problems.append("the user's query leaked into the messages")
    if any(m["role"] == "tool" for m in result.messages if m["content"] not in by_content):
        problems.append("a tool message that is not in the history")
    if history.reads > MAX_READS:
        problems.append(f"{history.reads} history reads (at most {MAX_READS}: constant round trips)")
    if history.largest_read > _settings().history_scan_limit:
        problems.append(f"read {history.largest_read} messages at once, over ORRERY_HISTORY_SCAN_LIMIT")
    return problems


def _same(a: ScopingResult, b: ScopingResult) -> bool:
    return (a.messages, a.included, a.excluded) == (b.messages, b.included, b.excluded)


async def check_strategy_conformance(
    strategy: type[Any] | str, *, agent: str = "coach", model: str = "offline"
) -> ConformanceReport:
    """Run every check and return the report (see `run_strategy_conformance` to assert)."""
    counter = counter_for(model)
    name = strategy if isinstance(strategy, str) else getattr(strategy, "name", strategy.__name__)
    report = ConformanceReport(str(name))
    for label, turns in HISTORIES.items():
        for index, budget in enumerate(BUDGETS if turns < 100 else HUGE_BUDGETS):
            report.runs += 1
            try:
                first, history = await _run(strategy, turns, budget, counter, agent)
                again = (await _run(strategy, turns, budget, counter, agent))[0] if index % 5 == 0 else first
            except Exception as exc:
                failure = f"raised {type(exc).__name__}: {exc}"
                report.failures.append(f"{label} history, budget {budget}: {failure}")
                continue
            problems = _check(first, history, budget, counter)
            if not _same(first, again):
                problems.append("two runs on the same input chose different messages or receipts")
            if label == "empty" and first.messages:
                problems.append("an empty history produced messages")
            report.failures += [f"{label} history, budget {budget}: {p}" for p in problems]
    return report


async def run_strategy_conformance(strategy: type[Any] | str, *, agent: str = "coach") -> ConformanceReport:
    """Assert the strategy (a class, or a registered name) keeps the scoping contract."""
    report = await check_strategy_conformance(strategy, agent=agent)
    if report.failures:
        shown = "\n  ".join(report.failures[:20])
        more = f"\n  ... and {len(report.failures) - 20} more" if len(report.failures) > 20 else ""
        raise AssertionError(
            f"strategy {report.strategy!r} broke the scoping contract in {len(report.failures)} of "
            f"{report.runs} runs:\n  {shown}{more}"
        )
    return report
