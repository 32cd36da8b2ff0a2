"""The document index: a project's PRD, API and schema files chunked for story-scoped context."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from orrery.db.base import Base, UUIDPrimaryKey, utcnow

CHUNK_KINDS = ("story", "endpoint", "model", "schema")


class DocIndex(Base):
    """One index per project: where its docs live and what the last indexing found."""

    __tablename__ = "doc_indexes"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    root: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    indexed_at: Mapped[datetime] = mapped_column(default=utcnow)


class DocChunk(UUIDPrimaryKey, Base):
    """A user story, API endpoint, DB model or validation schema, with links to related chunks."""

    __tablename__ = "doc_chunks"

    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    key: Mapped[str] = mapped_column(String(200))
    """US-001, `POST /workspaces`, `Workspace`, `CreateWorkspaceRequestSchema`."""
    title: Mapped[str] = mapped_column(String(300))
    epic: Mapped[str | None] = mapped_column(String(200))
    content: Mapped[str] = mapped_column(Text, default="")
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    keywords: Mapped[list[Any]] = mapped_column(default=list)
    links: Mapped[list[Any]] = mapped_column(default=list)
    """Keys of related chunks (stories link to endpoints, models and schemas, and back)."""
    source_path: Mapped[str] = mapped_column(Text)

    __table_args__ = (
        UniqueConstraint("project_id", "kind", "key", name="uq_doc_chunks_project_kind_key"),
        CheckConstraint("kind IN ('story', 'endpoint', 'model', 'schema')", name="kind_known"),
        Index("ix_doc_chunks_project_epic", "project_id", "epic"),
    )
