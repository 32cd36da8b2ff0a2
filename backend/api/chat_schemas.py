"""Response bodies of the chat routes, typed so the OpenAPI document describes them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel


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


class MessageOut(BaseModel):
    """One message of a session."""

    seq: int
    role: str
    content: str
    agent: str | None
    tool_calls: list[dict[str, Any]] | None
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


class ScopedMessageOut(BaseModel):
    """A message as the model receives it."""

    role: str
    content: str


class WorkingContextOut(BaseModel):
    """The working context the model would see next."""

    system_prompt: str
    messages: list[ScopedMessageOut]
    receipt: dict[str, Any]
