"""Conversations: sessions with a focus and an active agent, ordered messages, agent transitions."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from orrery.db.base import Base, Timestamps, UUIDPrimaryKey, utcnow
from orrery.vocabulary import FOCUS_KINDS, MESSAGE_ROLES, sql_in


class ChatSession(UUIDPrimaryKey, Timestamps, Base):
    """One conversation, optionally inside a project and focused on a project or an entity."""

    __tablename__ = "chat_sessions"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    title: Mapped[str | None] = mapped_column(String(300))
    focus_kind: Mapped[str | None] = mapped_column(String(16))
    focus_id: Mapped[uuid.UUID | None]
    active_agent: Mapped[str | None] = mapped_column(String(64))
    scoping_strategy: Mapped[str | None] = mapped_column(String(64))
    message_count: Mapped[int] = mapped_column(default=0)
    history_epoch: Mapped[int] = mapped_column(default=0, server_default="0")
    """Bumped by database triggers when a stored message is deleted or changed (migration 0010he):
    a process's cached copy of this session's history is stale when its epoch differs."""
    knowledge_focus: Mapped[str | None] = mapped_column(String(80))
    """The focus (`kind:id`, or `-` for none) the knowledge packet was loaded for."""
    knowledge_packet: Mapped[str | None] = mapped_column(Text)
    """The auto-loaded knowledge section, reused on later turns until the focus changes."""
    remember: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    """False: "don't remember this chat": never recalled in another chat, no fact is saved from it and
    the pattern analyst never reads it (it may still read memory itself; migration 0017mc)."""

    __table_args__ = (
        CheckConstraint(
            f"focus_kind IS NULL OR focus_kind IN {sql_in(FOCUS_KINDS)}", name="focus_kind_known"
        ),
        CheckConstraint("(focus_kind IS NULL) = (focus_id IS NULL)", name="focus_complete"),
        CheckConstraint("focus_kind IS NULL OR project_id IS NOT NULL", name="focus_needs_project"),
        Index("ix_chat_sessions_user", "user_id"),
        # `updated_at` changes with every message: indexed, no update of the row could be HOT
        {"postgresql_with": {"fillfactor": 70}},
    )


class Message(UUIDPrimaryKey, Base):
    """One message in a session, numbered by `seq`, attributed to the agent that wrote it."""

    __tablename__ = "messages"

    session_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("chat_sessions.id", ondelete="CASCADE"))
    seq: Mapped[int]
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text, default="")
    agent_id: Mapped[str | None] = mapped_column(String(64))
    tool_calls: Mapped[list[Any] | None]
    prompt_tokens: Mapped[int | None]
    completion_tokens: Mapped[int | None]
    token_count: Mapped[int | None]
    latency_ms: Mapped[int | None]
    cost_usd: Mapped[float | None]
    """The model call's price from litellm's price map (null when the model has no price, e.g. offline)."""
    model: Mapped[str | None] = mapped_column(String(200))
    """The model that answered (a fallback's id when one did; migration 0019am): a replay names it,
    and `cost_usd` is its price. Null for user messages and replies stored before it was kept."""
    client_key: Mapped[str | None] = mapped_column(String(200))
    """The client's Idempotency-Key for the user message that started a turn."""
    request_fingerprint: Mapped[str | None] = mapped_column(String(64))
    """SHA-256 of the request that carried `client_key`; the same key with another body is refused."""
    status: Mapped[str] = mapped_column(String(16), default="complete", server_default="complete")
    """`complete`; `failed` (a user message whose turn failed); `truncated` (a reply cut short)."""
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    token_counts: Mapped[dict[str, Any] | None]
    """Content tokens per tiktoken encoding, written once with the message (scoping reads them back)."""
    search_terms: Mapped[str | None] = mapped_column(Text)
    """The shared analyzer's stems of the content; indexed by FTS5 / a tsvector (migration 0004cq)."""
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary)
    """The message's float16 vector for hybrid relevance, from `embedding_model` (migration 0011em)."""
    embedding_model: Mapped[str | None] = mapped_column(String(200))
    """Which model made `embedding` (`all-MiniLM-L6-v2` or a litellm id); vectors of another model
    than the configured one are never ranked."""
    embedding_dim: Mapped[int | None]
    """The vector's size, read from the row (a remote model's is whatever it answers)."""
    superseded_at: Mapped[datetime | None]
    """Set when the user edited this message (or the one it answers) and sent it again: kept for
    the record, never shown in the chat nor read into a context again (migration 0012sm)."""
    forgotten_at: Mapped[datetime | None]
    """Set when a fact this message said or quoted was forgotten (or the turn it belongs to did):
    it stays in its own chat, but no other chat reads it again: recall, `search_memory`, digests and
    the pattern analyst skip it (`orrery.repo.lineage`; migration 0025fg)."""

    __table_args__ = (
        UniqueConstraint("session_id", "seq", name="uq_messages_session_seq"),
        Index(
            "uq_messages_session_client_key",
            "session_id",
            "client_key",
            unique=True,
            sqlite_where=text("client_key IS NOT NULL"),
            postgresql_where=text("client_key IS NOT NULL"),
        ),
        Index(  # "has this session a failed message?" is asked every turn (migration 0013fm)
            "ix_messages_failed",
            "session_id",
            sqlite_where=text("status = 'failed'"),
            postgresql_where=text("status = 'failed'"),
        ),
        CheckConstraint(f"role IN {sql_in(MESSAGE_ROLES)}", name="role_known"),
        CheckConstraint("status IN ('complete', 'failed', 'truncated')", name="status_known"),
        CheckConstraint("seq >= 1", name="seq_positive"),
        CheckConstraint("token_count IS NULL OR token_count >= 0", name="tokens_non_negative"),
    )


class AgentTransition(UUIDPrimaryKey, Base):
    """A switch of the active agent in a session, with the reason the router or model gave."""

    __tablename__ = "agent_transitions"

    session_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("chat_sessions.id", ondelete="CASCADE"))
    from_agent: Mapped[str | None] = mapped_column(String(64))
    to_agent: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str | None] = mapped_column(Text)
    message_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("messages.id", ondelete="SET NULL"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint("from_agent IS NULL OR from_agent <> to_agent", name="is_a_switch"),
        Index("ix_agent_transitions_session_created", "session_id", "created_at"),
    )


class SessionSummary(Base):
    """The running summary of a session's older messages (the `summary` scoping strategy).

    Extended incrementally: `covered_through_seq` says which messages are already folded in.
    """

    __tablename__ = "session_summaries"

    session_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("chat_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    summary: Mapped[str] = mapped_column(Text)
    covered_through_seq: Mapped[int]
    token_count: Mapped[int] = mapped_column(default=0)
    model: Mapped[str] = mapped_column(String(200))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    __table_args__ = (CheckConstraint("covered_through_seq >= 0", name="covered_non_negative"),)


class TurnSuspension(Base):
    """A turn waiting for the caller's tool results (OpenAI doors, issue 50): the model called a
    tool the caller defined, so the run stopped there. One per session (the turn lock serializes
    them); any worker resumes it from this row, and it expires at `expires_at`."""

    __tablename__ = "turn_suspensions"

    session_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("chat_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    message_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    """The user message the suspended turn answers."""
    agent_id: Mapped[str] = mapped_column(String(64))
    model: Mapped[str | None] = mapped_column(String(200))
    state: Mapped[dict[str, Any]]
    """The run so far: pydantic-ai messages, the tool calls seen, the usage, the pending call ids."""
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
