"""Scoping strategies: bounds, order, tool-call integrity, relevance, fallbacks, and the registry."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from orrery.errors import ValidationError
from orrery.memory.scoping import (
    ScopingContext,
    ScopingResult,
    get_strategy,
    register_strategy,
    strategy_names,
)
from orrery.memory.scoping.base import _REGISTRY, to_scoped
from orrery.memory.scoping.last_n import DEFAULT_MAX_MESSAGES
from tests.support.history import COUNTER, ListHistory, conversation, scoping_context


def ctx(
    history: ListHistory,
    *,
    agent: str = "coach",
    budget: int = 2500,
    query: str | None = None,
    **options: Any,
) -> ScopingContext:
    return scoping_context(history, agent=agent, budget=budget, query=query, options=options)


def cost(messages: list[dict[str, str]]) -> int:
    return sum(COUNTER.count_message(m["role"], m["content"]) for m in messages)


@pytest.mark.parametrize("agent", sorted(DEFAULT_MAX_MESSAGES))
async def test_last_n_returns_at_most_n_in_role_content_form(agent: str) -> None:
    history = ListHistory(conversation(20))
    result = await get_strategy("last_n").select(ctx(history, agent=agent))
    n = DEFAULT_MAX_MESSAGES[agent]
    assert len(result.messages) == n
    assert all(set(m) == {"role", "content"} for m in result.messages)
    assert [m["content"] for m in result.messages] == [m.content for m in history.messages[-n:]]
    assert result.excluded[0].key == f"seq 1-{40 - n}"


async def test_last_n_filter_and_explicit_n() -> None:
    history = ListHistory(conversation(10))
    result = await get_strategy("last_n").select(
        ctx(history, max_messages=3, filter=lambda m: m.role == "user")
    )
    assert [m["role"] for m in result.messages] == ["user"] * 3
    assert any(i.reason == "removed by the relevance filter" for i in result.excluded)


@pytest.mark.parametrize("name", ["last_n", "token_budget", "relevance", "summary"])
@pytest.mark.parametrize("budget", [0, 40, 150, 600])
async def test_budget_never_exceeded_and_order_preserved(name: str, budget: int) -> None:
    from orrery.memory.summaries import ExtractiveSummarizer

    history = ListHistory(conversation(30))
    c = ctx(history, budget=budget, query="release checklist item 3")
    c.summarizer = ExtractiveSummarizer(COUNTER)
    c.summaries = _MemoryStore()
    result = await get_strategy(name).select(c)
    assert cost(result.messages) <= budget
    verbatim = [m["content"] for m in result.messages if m["role"] != "system"]
    seqs = [next(h.seq for h in history.messages if h.content == text) for text in verbatim]
    assert seqs == sorted(seqs)


async def test_token_budget_keeps_newest_whole_messages() -> None:
    history = ListHistory(conversation(30))
    result = await get_strategy("token_budget").select(ctx(history, budget=100))
    assert result.messages and result.messages[-1]["content"] == history.messages[-1].content
    assert all(m["content"] in {h.content for h in history.messages} for m in result.messages)  # never cut
    assert history.queries == 1


@pytest.mark.parametrize("name", ["last_n", "token_budget", "relevance", "summary"])
async def test_tool_call_is_never_split_from_its_result(name: str) -> None:
    from orrery.memory.summaries import ExtractiveSummarizer

    msgs = conversation(5) + [
        ("user", "what blocks the pricing page?"),
        ("assistant", "Let me look at the linked entities."),
        ("tool", "get_linked_entities: depends_on Legal review (todo), Calculator (in_progress)"),
        ("tool", "get_linked_entities: references Pricing research summary"),
        ("assistant", "Legal review and the calculator."),
    ]
    history = ListHistory(msgs)
    for budget in range(0, 200, 7):
        c = ctx(history, budget=budget, max_messages=3, query="pricing page blocks")
        c.summarizer, c.summaries = ExtractiveSummarizer(COUNTER), _MemoryStore()
        result = await get_strategy(name).select(c)
        contents = [m["content"] for m in result.messages]
        has_call = "Let me look at the linked entities." in contents
        results = [x for x in contents if x.startswith("get_linked_entities")]
        assert (has_call and len(results) == 2) or (not has_call and not results), (budget, contents)


async def test_relevance_finds_an_old_message_that_last_n_misses() -> None:
    msgs = [
        ("user", "The legal review of the overage refund wording is owned by Priya."),
        ("assistant", "Noted: Priya owns the legal review."),
    ] + conversation(40)
    msgs.append(("user", "Who owns the legal review again?"))
    history = ListHistory(msgs)
    last_n = await get_strategy("last_n").select(ctx(history, agent="planner"))
    relevance = await get_strategy("relevance").select(ctx(history, query="Who owns the legal review again?"))
    needle = msgs[0][1]
    assert needle not in [m["content"] for m in last_n.messages]
    contents = [m["content"] for m in relevance.messages]
    assert needle in contents and contents[-1] == "Who owns the legal review again?"
    assert contents.index(needle) < contents.index(msgs[1][1])  # chronological
    assert any(i.reason.startswith("recalled") and i.score and i.score > 0 for i in relevance.included)


async def test_relevance_with_an_embedder_admits_semantic_matches() -> None:
    class Embedder:
        async def embed(self, texts: Any) -> list[list[float]]:
            return [[1.0, 0.0] if ("budget" in t or "money" in t) else [0.0, 1.0] for t in texts]

    msgs = [("user", "We have no money left for ads this quarter.")] + conversation(10)
    history = ListHistory(msgs)
    result = await get_strategy("relevance").select(
        ctx(history, query="What is our budget?", embedder=Embedder(), recent_window=2)
    )
    assert msgs[0][1] in [m["content"] for m in result.messages]


def test_registry_lists_builtins_and_rejects_unknown_names() -> None:
    assert {"last_n", "token_budget", "summary", "relevance"} <= set(strategy_names())
    with pytest.raises(ValidationError, match="unknown scoping strategy 'nope'"):
        get_strategy("nope")


async def test_a_developer_can_register_a_strategy_by_writing_one_class() -> None:
    @register_strategy
    class UserOnly:
        name: ClassVar[str] = "user_only"

        async def select(self, c: ScopingContext) -> ScopingResult:
            units = [[m] for m in await c.history.recent(100) if m.role == "user"]
            return ScopingResult(to_scoped(units), strategy=self.name)

    try:
        result = await get_strategy("user_only").select(ctx(ListHistory(conversation(3))))
        assert [m["role"] for m in result.messages] == ["user"] * 3
    finally:
        _REGISTRY.pop("user_only")


class _MemoryStore:
    """A SummaryStore stand-in for pure strategy tests (the DB store is tested in test_summary)."""

    def __init__(self) -> None:
        self.rows: dict[Any, Any] = {}

    async def get(self, session_id: Any) -> Any:
        return self.rows.get(session_id)

    async def save(self, session_id: Any, summary: str, covered: int, model: str, tokens: int) -> None:
        from orrery.memory.summaries import StoredSummary

        self.rows[session_id] = StoredSummary(summary, covered, model)
