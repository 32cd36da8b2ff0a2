"""Long-term memory about a person: check-ins (engagement) and the learned user summary."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, Index, Text
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
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
