"""Response bodies of the HTTP API."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Health(BaseModel):
    """Liveness plus the schema revision the server runs on, and whether relevance has its vectors."""

    status: str
    database: str
    revision: str | None
    embeddings: str = Field(
        description="`available`; `unavailable` when the local model's shipped files are missing "
        "(relevance runs lexical-only); `remote` when ORRERY_EMBEDDING_MODEL names a provider's model"
    )
    reason: str | None = Field(
        default=None, description="Why the status is not `ok` (`read_only`: the file or folder that is)"
    )


class UserOut(BaseModel):
    """The authenticated user."""

    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    email: str
    display_name: str


class ProjectOut(BaseModel):
    """A project the user belongs to."""

    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    name: str
    description: str | None
    created_at: datetime


class ProjectSummaryOut(BaseModel):
    """Counts that describe a project."""

    project_id: uuid.UUID
    name: str
    description: str | None
    entities: dict[str, int]
    task_states: dict[str, int]
    edges: int
    context_document: str | None
    kb_collections: dict[str, int]
    kb_relations: int
    check_ins: int
    last_check_in: datetime | None
    chat_sessions: int


class EntityOut(BaseModel):
    """An entity of the project graph."""

    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    project_id: uuid.UUID
    kind: str
    name: str
    state: str
    type_key: str | None
    description: str | None
    props: dict[str, Any]
    due_at: datetime | None
    goal_type: str | None
    is_scratch: bool
    is_context_document: bool
    created_at: datetime
    updated_at: datetime


class EdgeOut(BaseModel):
    """A directed, typed edge."""

    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    src_id: uuid.UUID
    src_kind: str
    rel: str
    dst_id: uuid.UUID
    dst_kind: str


class EntityWithEdges(BaseModel):
    """An entity and every edge touching it."""

    entity: EntityOut
    edges: list[EdgeOut]
