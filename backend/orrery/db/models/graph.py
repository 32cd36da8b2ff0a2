"""The project ontology: typed entities and typed, directed edges between them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from orrery.db.base import Base, Timestamps, UUIDPrimaryKey, utcnow
from orrery.vocabulary import ENTITY_KINDS, GOAL_TYPES, RELATIONS, sql_in


class Entity(UUIDPrimaryKey, Timestamps, Base):
    """A task, plan, goal, milestone, document or output inside a project.

    One table for every kind keeps linked-entity loading to a single batched fetch.
    """

    __tablename__ = "entities"

    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(300))
    state: Mapped[str] = mapped_column(String(32), default="active")
    type_key: Mapped[str | None] = mapped_column(String(100))
    description: Mapped[str | None] = mapped_column(Text)
    props: Mapped[dict[str, Any]] = mapped_column(default=dict)
    due_at: Mapped[datetime | None]
    goal_type: Mapped[str | None] = mapped_column(String(16))
    is_scratch: Mapped[bool] = mapped_column(Boolean, default=False)
    is_context_document: Mapped[bool] = mapped_column(Boolean, default=False)
    graph_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Bumped with every write that changes this entity's linked context (linked-entity caches of
    every process compare it on read; see `backend/orrery/repo/graph_versions.py`)."""

    __table_args__ = (
        CheckConstraint(f"kind IN {sql_in(ENTITY_KINDS)}", name="kind_known"),
        CheckConstraint("length(name) > 0", name="name_not_empty"),
        CheckConstraint("length(state) > 0", name="state_not_empty"),
        CheckConstraint(
            f"goal_type IS NULL OR (kind = 'goal' AND goal_type IN {sql_in(GOAL_TYPES)})",
            name="goal_type_only_for_goals",
        ),
        CheckConstraint("NOT is_scratch OR kind = 'document'", name="scratch_only_documents"),
        CheckConstraint("NOT is_context_document OR kind = 'document'", name="context_doc_is_document"),
        Index("ix_entities_project_kind_state", "project_id", "kind", "state"),
        Index("ix_entities_project_updated", "project_id", "updated_at"),
        Index(
            "uq_entities_one_context_document",
            "project_id",
            unique=True,
            sqlite_where=text("is_context_document = 1"),
            postgresql_where=text("is_context_document"),
        ),
    )


class Edge(UUIDPrimaryKey, Base):
    """A directed, typed relation `src --rel--> dst` between two entities of one project."""

    __tablename__ = "edges"

    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    src_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"))
    src_kind: Mapped[str] = mapped_column(String(16))
    rel: Mapped[str] = mapped_column(String(32))
    dst_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"))
    dst_kind: Mapped[str] = mapped_column(String(16))
    props: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        UniqueConstraint("src_id", "rel", "dst_id", name="uq_edges_src_rel_dst"),
        CheckConstraint(f"rel IN {sql_in(RELATIONS)}", name="rel_known"),
        CheckConstraint("src_id <> dst_id", name="no_self_loop"),
        CheckConstraint(f"src_kind IN {sql_in(ENTITY_KINDS)}", name="src_kind_known"),
        CheckConstraint(f"dst_kind IN {sql_in(ENTITY_KINDS)}", name="dst_kind_known"),
        Index("ix_edges_dst_id_rel", "dst_id", "rel"),
    )
