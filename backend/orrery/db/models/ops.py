"""Operations tables: durable background jobs and per-user usage counters for limits.

Both live in the database (not in a process) so several workers on one PostgreSQL share them.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from orrery.db.base import Base, Timestamps, UUIDPrimaryKey, utcnow
from orrery.vocabulary import sql_in

JOB_STATUSES = ("queued", "running", "done", "failed")
PENDING = "status IN ('queued', 'running') AND dedupe_key IS NOT NULL"
"""The jobs a `dedupe_key` is unique among: one queued or running job per key."""
FAILED = "status = 'failed' AND dedupe_key IS NOT NULL"
"""Keyed jobs that failed for good: `enqueue_once(failed_within=...)` looks for a recent one."""


class Job(UUIDPrimaryKey, Timestamps, Base):
    """One unit of background work; a worker leases it (`locked_until`) while it runs, so a job
    whose worker died is claimed again once the lease expires."""

    __tablename__ = "jobs"

    kind: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16), default="queued")
    attempts: Mapped[int] = mapped_column(default=0)
    max_attempts: Mapped[int] = mapped_column(default=5)
    run_after: Mapped[datetime] = mapped_column(default=utcnow)
    locked_until: Mapped[datetime | None]
    locked_by: Mapped[str | None] = mapped_column(String(120))
    last_error: Mapped[str | None] = mapped_column(Text)
    dedupe_key: Mapped[str | None] = mapped_column(String(200))
    """Work that one run covers (a person's summary refresh): while a job with this key is queued or
    running, enqueueing another with it adds nothing."""

    __table_args__ = (
        CheckConstraint(f"status IN {sql_in(JOB_STATUSES)}", name="status_known"),
        Index("ix_jobs_status_run_after", "status", "run_after"),
        Index(
            "uq_jobs_pending_dedupe_key",
            "dedupe_key",
            unique=True,
            sqlite_where=text(PENDING),
            postgresql_where=text(PENDING),
        ),
        Index(
            "ix_jobs_failed_dedupe_key",
            "dedupe_key",
            "updated_at",
            sqlite_where=text(FAILED),
            postgresql_where=text(FAILED),
        ),
    )


class UsageCounter(Base):
    """A fixed-window counter per user (`minute` turns, `day` tokens), reset when its window moves on."""

    __tablename__ = "usage_counters"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    period: Mapped[str] = mapped_column(String(16), primary_key=True)
    """`minute` (turns) or `day` (tokens)."""
    window_start: Mapped[datetime]
    count: Mapped[int] = mapped_column(default=0)
