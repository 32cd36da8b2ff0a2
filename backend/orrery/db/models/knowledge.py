"""The team's domain knowledge: prioritized collections of coded entries and typed relations."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from orrery.db.base import Base, Timestamps, UUIDPrimaryKey, utcnow


class KbCollection(UUIDPrimaryKey, Timestamps, Base):
    """A named group of entries, e.g. `business-rules`; lower priority numbers rank first."""

    __tablename__ = "kb_collections"

    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    slug: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    priority: Mapped[int] = mapped_column(default=100)

    __table_args__ = (
        UniqueConstraint("project_id", "slug", name="uq_kb_collections_project_slug"),
        CheckConstraint("length(slug) > 0", name="slug_not_empty"),
        CheckConstraint("priority >= 0", name="priority_non_negative"),
    )


class KbEntry(UUIDPrimaryKey, Timestamps, Base):
    """One piece of knowledge with a stable code such as `BR-012`; `data` holds `code_paths` etc."""

    __tablename__ = "kb_entries"

    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    collection_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("kb_collections.id", ondelete="CASCADE"), index=True
    )
    code: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(300))
    description: Mapped[str | None] = mapped_column(Text)
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)

    __table_args__ = (
        UniqueConstraint("project_id", "code", name="uq_kb_entries_project_code"),
        CheckConstraint("length(code) > 0", name="code_not_empty"),
        CheckConstraint("length(name) > 0", name="name_not_empty"),
    )


class KbRelation(UUIDPrimaryKey, Base):
    """A typed link between two entries (e.g. `BR-012 --defines--> GT-019`)."""

    __tablename__ = "kb_relations"

    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    src_entry_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("kb_entries.id", ondelete="CASCADE"))
    rel_type: Mapped[str] = mapped_column(String(64))
    dst_entry_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("kb_entries.id", ondelete="CASCADE"))

    __table_args__ = (
        UniqueConstraint("src_entry_id", "rel_type", "dst_entry_id", name="uq_kb_relations_src_type_dst"),
        CheckConstraint("src_entry_id <> dst_entry_id", name="no_self_loop"),
        CheckConstraint("length(rel_type) > 0", name="rel_type_not_empty"),
        Index("ix_kb_relations_dst_entry_id", "dst_entry_id"),
    )


class KbEntryRevision(UUIDPrimaryKey, Base):
    """Provenance of a change to an entry made through the product (tools, API, CLI)."""

    __tablename__ = "kb_entry_revisions"

    entry_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("kb_entries.id", ondelete="CASCADE"))
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), index=True)
    session_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("chat_sessions.id", ondelete="SET NULL"), index=True
    )
    changes: Mapped[dict[str, Any]] = mapped_column(default=dict)
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (Index("ix_kb_entry_revisions_entry_created", "entry_id", "created_at"),)
