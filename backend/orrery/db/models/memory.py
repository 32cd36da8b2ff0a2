"""Long-term memory about a person: check-ins (engagement), the learned user summary and remembered facts."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from orrery.db.base import Base, UUIDPrimaryKey, utcnow


class CheckIn(UUIDPrimaryKey, Base):
    """A moment the person showed up: a note, an optional mood, optionally about a goal."""

    __tablename__ = "check_ins"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("projects.id", ondelete="SET NULL"), index=True
    )
    goal_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("entities.id", ondelete="SET NULL"), index=True
    )
    note: Mapped[str | None] = mapped_column(Text)
    mood: Mapped[int | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint("mood IS NULL OR (mood BETWEEN 1 AND 5)", name="mood_range"),
        Index("ix_check_ins_user_created", "user_id", "created_at"),
    )


class UserSummary(Base):
    """Patterns, wins and struggles learned about a person, maintained by the pattern analyst."""

    __tablename__ = "user_summaries"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    patterns: Mapped[list[Any]] = mapped_column(default=list)
    wins: Mapped[list[Any]] = mapped_column(default=list)
    struggles: Mapped[list[Any]] = mapped_column(default=list)
    source_sessions: Mapped[list[Any]] = mapped_column(default=list, server_default="[]")
    """The chats (ids as strings) whose messages the analyst read: forgetting one rebuilds the summary."""
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Fact(UUIDPrimaryKey, Base):
    """Something the person asked to be remembered, with its lineage: the chat and message it came
    from (null when typed in by hand), when it became true, and the newer fact that replaced it."""

    __tablename__ = "facts"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16), default="fact", server_default="fact")
    """`fact`, or a standing `instruction` / `preference` the person expects to hold in later chats."""
    project_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    """The project an instruction or preference holds in; null: every project (a global one, and
    every plain fact)."""
    subject: Mapped[str | None] = mapped_column(String(200))
    """What the fact is about ("home city"): a newer fact on the same subject supersedes this one."""
    source_session_id: Mapped[uuid.UUID | None]
    """The chat it was said in; no foreign key, so deleting the chat keeps the lineage (migration 0017mc)."""
    source_seq: Mapped[int | None]
    valid_from: Mapped[datetime | None]
    """When it became true, if the person said so."""
    superseded_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("facts.id", ondelete="SET NULL"))
    superseded_at: Mapped[datetime | None]
    """Set when a newer fact replaced this one: kept as history, never shown to the model as current."""
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    __table_args__ = (
        CheckConstraint("length(text) > 0", name="text_not_empty"),
        CheckConstraint("kind IN ('fact', 'instruction', 'preference')", name="fact_kind_known"),
        Index("ix_facts_user_current", "user_id", "superseded_at"),
        Index("ix_facts_user_source", "user_id", "source_session_id"),
    )


class ChatDigest(Base):
    """A short, dated digest of one chat (what the person asked for and decided, the numbers and names
    they gave, in order), built once when the chat goes quiet; the "Earlier chats" timeline of a new
    chat is made of them. It goes with its chat (deleted with it) and is rebuilt or removed when what it
    drew on is forgotten."""

    __tablename__ = "chat_digests"

    chat_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("chat_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(16), default="extractive")
    """`extractive` (no model) or `model` (written by the configured model)."""
    model: Mapped[str | None] = mapped_column(String(200))
    cost_usd: Mapped[float | None]
    message_count: Mapped[int] = mapped_column(default=0)
    """The chat's `message_count` when digested: fewer than the chat has now means it is stale."""
    history_epoch: Mapped[int] = mapped_column(default=0)
    """The chat's `history_epoch` when digested: an edit or deletion since makes it stale."""
    first_at: Mapped[datetime | None]
    last_at: Mapped[datetime | None]
    """When the chat's first and last digested messages were written."""
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    __table_args__ = (Index("ix_chat_digests_user", "user_id", "last_at"),)
