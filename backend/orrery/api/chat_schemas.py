"""Bodies of the chat routes, typed so the OpenAPI document describes them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from orrery.services.turns import AgentName as AgentName  # the agent id type, shared with the web door


class FocusOut(BaseModel):
    """What a session is about."""

    kind: str
    id: uuid.UUID


class SessionOut(BaseModel):
    """A chat session."""

    id: uuid.UUID
    project_id: uuid.UUID | None
    focus: FocusOut | None
    active_agent: str | None
    scoping_strategy: str | None
    message_count: int
    title: str | None
    remember: bool
    """False: "don't remember this chat" (never recalled in another chat, no facts, no patterns)."""


class MessageOut(BaseModel):
    """One message of a session."""

    seq: int
    role: str
    content: str
    agent: str | None
    tool_calls: list[dict[str, Any]] | None
    status: str = "complete"
    """`complete`; `failed` (a user message whose turn failed); `truncated` (a reply cut short)."""
    model: str | None = None
    """The model that answered (a reply's; a fallback's id when one did); null for user messages and
    replies stored before Orrery kept it."""
    created_at: datetime


class SessionWithMessages(SessionOut):
    """A session with one page of its messages."""

    messages: list[MessageOut]


class UsageOut(BaseModel):
    """Tokens of one reply."""

    input_tokens: int | None
    output_tokens: int | None


class TurnOut(BaseModel):
    """A finished turn (`Accept: application/json`)."""

    message_id: uuid.UUID
    seq: int
    agent: str | None
    reply: str
    tool_calls: list[dict[str, Any]]
    handoff: str | None
    usage: UsageOut
    latency_ms: int | None
    replayed: bool
    truncated: bool = False
    """The model's stream ended without a finish reason (or hit the token limit)."""
    model: str | None = None
    """The model that answered (a configured fallback's name when the first model failed), also on a
    replayed turn; null only for a reply stored before Orrery kept it."""


class ScopedMessageOut(BaseModel):
    """A message as the model receives it."""

    role: str
    content: str


class WorkingContextOut(BaseModel):
    """The working context the model would see next."""

    system_prompt: str
    messages: list[ScopedMessageOut]
    receipt: dict[str, Any]


class VerdictOut(BaseModel):
    """One strategy's decision on one unit."""

    kept: bool
    reason: str
    score: float | None


class UnitComparisonOut(BaseModel):
    """One receipt line (usually a message unit, `seq 3` or `seq 3-4`) across the strategies."""

    kind: str
    key: str
    tokens: int | None
    agreement: Literal["all", "some", "none"]
    """Kept by all the compared strategies, by some (`kept_by`) or by none."""
    kept_by: list[str]
    verdicts: dict[str, VerdictOut]


class StrategyTotalsOut(BaseModel):
    """What one strategy selected, in sum."""

    name: str
    ran_as: str
    messages: int
    tokens: int
    budget: int
    kept: int
    dropped: int
    notes: list[str]
    earlier_chats_tokens: int = 0
    """What the excerpts from earlier chats took of the room this strategy left."""
    earlier_chats_budget: int = 0
    earlier_chats: list[dict[str, Any]] = []
    """The excerpts recalled beside this strategy's selection: chat title, seq, date, tokens,
    score and why, as in the receipt's `earlier_chats` section."""


class ComparisonOut(BaseModel):
    """Scoping strategies side by side on one turn (`?compare=`); nothing was stored."""

    session_id: uuid.UUID
    agent: str
    at: int | None
    latest_seq: int
    query: str | None
    strategies: list[str]
    totals: list[StrategyTotalsOut]
    units: list[UnitComparisonOut]
    notes: list[str]
