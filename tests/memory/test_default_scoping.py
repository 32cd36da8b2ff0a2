"""The built-in agents' default (`relevance`): the agent's last N messages verbatim, as `last_n`
keeps them, plus recalled older units — never over budget, units whole, receipts that say which."""

from __future__ import annotations

from typing import Any

import pytest

from orrery.context.strategy import resolve_strategy
from orrery.memory.scoping import ScopingContext, get_strategy
from orrery.roster import AGENTS
from tests.support.history import COUNTER, SETTINGS, ListHistory, conversation, scoping_context

NEEDLE = "The legal review of the overage refund wording is owned by Priya."


def _ctx(history: ListHistory, agent: str, budget: int, query: str | None) -> ScopingContext:
    options = dict(resolve_strategy(AGENTS[agent], SETTINGS).options)
    return scoping_context(history, agent=agent, budget=budget, query=query, options=options)


def _history(extra: list[tuple[str, str]] | None = None) -> ListHistory:
    msgs = [("user", NEEDLE), ("assistant", "Noted: Priya owns the legal review.")]
    msgs += conversation(30) + (extra or []) + [("user", "Who owns the legal review again?")]
    return ListHistory(msgs)


def test_every_built_in_agent_defaults_to_relevance() -> None:
    for agent in AGENTS.values():
        if agent.plugin is None:
            assert resolve_strategy(agent, SETTINGS).name == "relevance", agent.id


@pytest.mark.parametrize("agent", sorted(a.id for a in AGENTS.values() if a.plugin is None))
async def test_keeps_the_last_n_as_last_n_does_and_recalls_what_fell_outside(agent: str) -> None:
    history = _history()
    query = history.messages[-1].content
    default = await get_strategy("relevance").select(_ctx(history, agent, 2000, query))
    last_n = await get_strategy("last_n").select(_ctx(history, agent, 2000, query))
    kept = [m["content"] for m in default.messages]
    tail = [m["content"] for m in last_n.messages]
    assert kept[-len(tail) :] == tail  # the last N, verbatim, in order
    assert NEEDLE in kept and NEEDLE not in tail  # and the old answer last_n forgot
    reasons = {i.key: i.reason for i in default.included if i.kind == "message"}
    n = AGENTS[agent].max_messages
    assert reasons[f"seq {history.latest_seq}"] == f"recent: among the last {n} messages"
    assert reasons["seq 1"].startswith("recalled")


@pytest.mark.parametrize("budget", [0, 15, 60, 150, 400, 1000])
async def test_never_over_budget_and_tool_units_whole(budget: int) -> None:
    tools = [
        ("assistant", "Let me look at the linked entities of the overage refund."),
        ("tool", "get_linked_entities: depends_on Legal review (todo)"),
        ("tool", "get_linked_entities: references Refund wording draft"),
        ("assistant", "The legal review blocks it."),
    ]
    history = _history(tools)
    result = await get_strategy("relevance").select(_ctx(history, "planner", budget, "legal review refund"))
    contents = [m["content"] for m in result.messages]
    assert sum(COUNTER.count_message(m["role"], m["content"]) for m in result.messages) <= budget
    calls = [c for c in contents if c.startswith("Let me look")]
    results = [c for c in contents if c.startswith("get_linked_entities")]
    assert (calls and len(results) == 2) or (not calls and not results), contents
    seqs = [int(i.key.split()[1].split("-")[0]) for i in result.included if i.kind == "message"]
    assert seqs == sorted(seqs)  # chronological


async def test_long_replies_leave_recall_room() -> None:
    """The recent window takes at most half the budget, so recall always has room."""
    long = "The checklist item is described at length here. " * 30
    msgs: list[tuple[str, str]] = [("user", NEEDLE)] + [("assistant", long)] * 12
    history = ListHistory([*msgs, ("user", "Who owns the legal review?")])
    result = await get_strategy("relevance").select(
        _ctx(history, "coach", 1200, "Who owns the legal review?")
    )
    assert NEEDLE in [m["content"] for m in result.messages]
    assert any(i.reason == "over the conversation budget" for i in result.excluded)


def _options(**kw: Any) -> dict[str, Any]:
    return kw


async def test_explicit_recent_window_overrides_the_agent_n() -> None:
    history = _history()
    c = _ctx(history, "coach", 3000, None)
    c.options = _options(recent_window=2, max_messages=10)
    result = await get_strategy("relevance").select(c)
    recent = [i for i in result.included if i.reason.startswith("recent")]
    assert len(recent) == 2


async def test_a_long_session_names_the_best_related_units_left_out_and_counts_the_rest() -> None:
    """Hundreds of related units over budget: the receipt names the best ones and counts the others
    in one line (its size, and each turn's `context` event, stay the same as the session grows)."""
    from orrery.memory.scoping.relevance import LISTED_OVER_BUDGET, RECALLED

    related = [("user", f"Priya checked the legal review of refund wording, draft {i}.") for i in range(200)]
    history = ListHistory([*related, ("user", "Who owns the legal review of the refund wording?")])
    result = await get_strategy("relevance").select(
        _ctx(history, "planner", 300, history.messages[-1].content)
    )
    over = [i for i in result.excluded if i.reason == RECALLED + ", over budget"]
    named, counted = over[:-1], over[-1]
    assert len(named) == LISTED_OVER_BUDGET and all(i.kind == "message" for i in named)
    assert [i.score for i in named] == sorted((i.score for i in named), reverse=True)  # best first
    assert counted.kind == "messages" and counted.key.endswith(" more related units")
    shown = {i.key for i in result.included if i.kind == "message"} | {i.key for i in named}
    left = int(counted.key.split()[0])
    assert len(shown) + left <= len(history.messages) and left > LISTED_OVER_BUDGET
    assert counted.tokens and counted.tokens > 0
