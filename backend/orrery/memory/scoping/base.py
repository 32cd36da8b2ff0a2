"""The message-scoping contract: one Protocol, a registry by name, and shared helpers.

A strategy decides which conversation messages an agent sees on a turn, within a token budget.
To add one: write a class with a `name` and an async `select(ctx)`, decorate it with
`@register_strategy`, and import its module in `backend/orrery/memory/scoping/__init__.py`. A session
(`chat_sessions.scoping_strategy`), an agent (`ORRERY_AGENT_STRATEGIES`) or a caller then picks it
by name.

Messages travel in units: a message plus the `tool` messages that answer it. Units are kept or
dropped whole, so a tool call is never separated from its result.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from orrery.errors import ValidationError
from orrery.sections import ReceiptItem as ReceiptItem  # the receipt line strategies return
from orrery.sections import ScopedMessage as ScopedMessage  # what the model receives
from orrery.tokens import MESSAGE_OVERHEAD, TokenCounter

if TYPE_CHECKING:
    from orrery.config import Settings
    from orrery.memory.summaries import Summarizer, SummaryStore


@dataclass(frozen=True)
class HistoryMessage:
    """A stored message with its metadata (what strategies read)."""

    seq: int
    role: str
    content: str
    agent_id: str | None = None
    created_at: datetime | None = None
    has_tool_calls: bool = False
    token_counts: Mapping[str, int] | None = None
    """Content tokens per encoding, stored when the message was written (None: count on read)."""


@dataclass
class ScopingResult:
    """Selected messages (chronological) plus the receipt of what went in and what stayed out."""

    messages: list[ScopedMessage]
    included: list[ReceiptItem] = field(default_factory=list)
    excluded: list[ReceiptItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    strategy: str = ""


class HistorySource(Protocol):
    """Reads a session's messages; each call is one query."""

    latest_seq: int

    async def recent(self, limit: int) -> list[HistoryMessage]:
        """The newest `limit` messages, oldest first."""
        ...

    async def between(self, after_seq: int, through_seq: int) -> list[HistoryMessage]:
        """Messages with `after_seq < seq <= through_seq`, oldest first."""
        ...


@dataclass
class ScopingContext:
    """Everything a strategy may use on one turn."""

    agent: str
    session_id: uuid.UUID
    history: HistorySource
    """The session's stored messages, the current user message included (it is stored before the
    turn runs); the orchestrator drops it from the model's history when the selection ends with it."""
    query: str | None
    budget: int
    counter: TokenCounter
    settings: Settings
    options: dict[str, Any] = field(default_factory=dict)
    summaries: SummaryStore | None = None
    summarizer: Summarizer | None = None


@runtime_checkable
class MessageScopingStrategy(Protocol):
    """Chooses the conversation messages an agent sees, within `ctx.budget` tokens."""

    name: ClassVar[str]

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        """Return the chosen messages in chronological order and a receipt."""
        ...


_REGISTRY: dict[str, Callable[[], MessageScopingStrategy]] = {}


def register_strategy(cls: type[Any]) -> type[Any]:
    """Class decorator: make a strategy choosable by its `name`."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} needs a class attribute `name`")
    _REGISTRY[name] = cls
    return cls


def get_strategy(name: str) -> MessageScopingStrategy:
    """A fresh instance of the named strategy, or a `ValidationError` listing the known ones.
    Plugins' strategies are here once the composition root has registered them (`orrery.app`)."""
    if name not in _REGISTRY:
        raise ValidationError(f"unknown scoping strategy {name!r}; known: {', '.join(strategy_names())}")
    return _REGISTRY[name]()


def strategy_names() -> list[str]:
    """Every registered strategy name, sorted."""
    return sorted(_REGISTRY)


# --- helpers shared by strategies -------------------------------------------------------------

Unit = list[HistoryMessage]


def group_units(messages: Sequence[HistoryMessage]) -> tuple[list[Unit], list[HistoryMessage]]:
    """Group messages into units (a message and the tool results after it).

    Returns the units and any leading tool messages whose call lies outside the window (orphans).
    """
    units: list[Unit] = []
    orphans: list[HistoryMessage] = []
    for message in messages:
        if message.role == "tool":
            if units:
                units[-1].append(message)
            else:
                orphans.append(message)
        else:
            units.append([message])
    return units, orphans


@lru_cache(maxsize=64)
def _role_cost(counter: TokenCounter, role: str) -> int:
    return counter.count(role) + MESSAGE_OVERHEAD


def message_tokens(message: HistoryMessage, counter: TokenCounter) -> int:
    """What a message costs in the prompt: its stored content count when there is one for the
    counter's encoding (read back, never recomputed), else counted now."""
    stored = message.token_counts.get(counter.encoding_name) if message.token_counts else None
    if stored is None:
        return counter.count_message(message.role, message.content)
    return int(stored) + _role_cost(counter, message.role)


def unit_tokens(unit: Sequence[HistoryMessage], counter: TokenCounter) -> int:
    """What a unit costs in the prompt."""
    return sum(message_tokens(m, counter) for m in unit)


def unit_key(unit: Unit) -> str:
    """Receipt key of a unit: its seq range."""
    first, last = unit[0].seq, unit[-1].seq
    return f"seq {first}" if first == last else f"seq {first}-{last}"


def to_scoped(units: Sequence[Unit]) -> list[ScopedMessage]:
    """Strip metadata: role and content only, chronological."""
    return [ScopedMessage(role=m.role, content=m.content) for unit in units for m in unit]


def newest_units_within(
    units: Sequence[Unit], budget: int, counter: TokenCounter
) -> tuple[list[Unit], list[Unit]]:
    """The newest whole units that fit `budget` (chronological), and the older ones that did not."""
    kept: list[Unit] = []
    used = 0
    cut = len(units)
    for index in range(len(units) - 1, -1, -1):
        cost = unit_tokens(units[index], counter)
        if used + cost > budget:
            break
        kept.append(units[index])
        used += cost
        cut = index
    kept.reverse()
    return kept, list(units[:cut])


def receipt_for(units: Sequence[Unit], counter: TokenCounter, reason: str) -> list[ReceiptItem]:
    """One receipt line per unit."""
    return [ReceiptItem("message", unit_key(u), unit_tokens(u, counter), reason) for u in units]


def older_than_window(first_seq_in_window: int, reason: str) -> list[ReceiptItem]:
    """One line for every message never read because it lies before the window."""
    if first_seq_in_window <= 1:
        return []
    span = "seq 1" if first_seq_in_window == 2 else f"seq 1-{first_seq_in_window - 1}"
    return [ReceiptItem("messages", span, None, reason)]


async def older_than_window_counted(
    history: HistorySource, first_seq_in_window: int, reason: str, counter: TokenCounter
) -> list[ReceiptItem]:
    """`older_than_window`, with how many messages and ~tokens that is when the history can sum its
    stored counts in one query (never by reading or counting the messages)."""
    items = older_than_window(first_seq_in_window, reason)
    totals = getattr(history, "totals", None)
    if not items or totals is None:
        return items
    count, tokens = await totals(first_seq_in_window - 1, counter.encoding_name)
    if tokens is None:
        return items
    cost = tokens + count * _role_cost(counter, "user")
    return [
        ReceiptItem(
            "messages", items[0].key, cost, f"{count} older messages, ~{_short(cost)} tokens: {reason}"
        )
    ]


def _short(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def orphan_receipt(orphans: Sequence[HistoryMessage]) -> list[ReceiptItem]:
    """Tool results whose call fell outside the window are dropped, never sent alone."""
    return [
        ReceiptItem("message", f"seq {m.seq}", None, "tool result whose call is outside the window")
        for m in orphans
    ]
