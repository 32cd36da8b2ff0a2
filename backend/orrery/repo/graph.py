"""Entities and edges of a project's ontology, always reached through the calling user.

Edges are validated before anything is written: the relation must be known, both ends must exist
and be visible to the user, and both must live in the same project.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, Uuid, bindparam, delete, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import Edge, Entity
from orrery.errors import (
    ConflictError,
    CrossProjectEdgeError,
    NotFoundError,
    UnknownRelationError,
    ValidationError,
)
from orrery.repo.graph_versions import bump_entities, bump_neighbourhood, bump_project
from orrery.repo.scope import as_uuid, member_project_ids, require_project
from orrery.vocabulary import ENTITY_KINDS, GOAL_TYPES, RELATIONS

ENTITY_FIELDS = (
    "name", "state", "type_key", "description", "props", "due_at", "goal_type", "is_scratch",
    "is_context_document",
)  # fmt: skip


@dataclass(frozen=True)
class EntitySpec:
    """What a caller may set on an entity; validated by `validate_entity_spec`."""

    kind: str
    name: str
    state: str = "active"
    type_key: str | None = None
    description: str | None = None
    props: dict[str, Any] | None = None
    due_at: datetime | None = None
    goal_type: str | None = None
    is_scratch: bool = False
    is_context_document: bool = False


def validate_entity_spec(spec: EntitySpec) -> None:
    """Raise `ValidationError` for anything the database would reject, with a readable message."""
    if spec.kind not in ENTITY_KINDS:
        raise ValidationError(f"unknown entity kind {spec.kind!r}; expected one of {', '.join(ENTITY_KINDS)}")
    if not spec.name.strip():
        raise ValidationError("entity name must not be empty")
    if len(spec.name) > 300:
        raise ValidationError("entity name is longer than 300 characters")
    if not spec.state.strip():
        raise ValidationError("entity state must not be empty")
    if spec.goal_type is not None and (spec.kind != "goal" or spec.goal_type not in GOAL_TYPES):
        raise ValidationError(f"goal_type must be one of {', '.join(GOAL_TYPES)} and is only for goals")
    if (spec.is_scratch or spec.is_context_document) and spec.kind != "document":
        raise ValidationError("only documents can be scratch or the project context document")
    if spec.due_at is not None and spec.due_at.tzinfo is None:
        raise ValidationError("due_at must carry a timezone")


def _what_conflicted(exc: IntegrityError) -> ValidationError | ConflictError:
    """The rule the new entity broke, by the constraint the database names (not always the one
    context document a project may have)."""
    text = str(exc.orig)
    if "one_context_document" in text or "UNIQUE constraint failed: entities.project_id" in text:
        return ConflictError("this project already has a context document")
    broken = next((rule for rule in _ENTITY_RULES if rule in text), None)
    if broken is None:
        return ConflictError("the entity conflicts with data already stored")
    return ValidationError(f"the entity breaks the rule {broken!r}: {_ENTITY_RULES[broken]}")


_ENTITY_RULES = {
    "name_not_empty": "the name must not be empty",
    "state_not_empty": "the state must not be empty",
    "kind_known": "the kind must be a known one",
    "goal_type_only_for_goals": "goal_type is only for goals",
    "scratch_only_documents": "only documents can be scratch",
    "context_doc_is_document": "only a document can be the context document",
}


async def create_entity(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    spec: EntitySpec,
    *,
    entity_id: uuid.UUID | None = None,
) -> Entity:
    """Create an entity in a project the user may write to (`entity_id`: a fixed id, for content
    that must read the same wherever it is loaded, the demo's; else a new one)."""
    validate_entity_spec(spec)
    project = await require_project(session, user_id, project_id, write=True)
    entity = Entity(
        id=entity_id or uuid.uuid4(),
        project_id=project.id,
        kind=spec.kind,
        name=spec.name.strip(),
        state=spec.state,
        type_key=spec.type_key,
        description=spec.description,
        props=spec.props or {},
        due_at=spec.due_at,
        goal_type=spec.goal_type,
        is_scratch=spec.is_scratch,
        is_context_document=spec.is_context_document,
    )
    try:
        async with session.begin_nested():
            session.add(entity)
    except IntegrityError as exc:
        raise _what_conflicted(exc) from None
    if entity.is_context_document:  # it shows in every entity's linked context
        await bump_project(session, project.id)
    return entity


@cache
def _visible_entity() -> Select[Entity]:
    """An entity by id in one of the user's projects (both bound per call), built once per process."""
    user = bindparam("uid", type_=Uuid())
    return select(Entity).where(
        Entity.id == bindparam("eid", type_=Uuid()), Entity.project_id.in_(member_project_ids(user))
    )


async def get_entity(session: AsyncSession, user_id: uuid.UUID, entity_id: uuid.UUID | str) -> Entity:
    """An entity in one of the user's projects, or `NotFoundError`."""
    eid = as_uuid(entity_id, "entity")
    entity = (await session.execute(_visible_entity(), {"eid": eid, "uid": user_id})).scalar_one_or_none()
    if entity is None:
        raise NotFoundError("entity", eid)
    return entity


async def get_entities(
    session: AsyncSession, user_id: uuid.UUID, entity_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, Entity]:
    """Many entities in one query; ids the user may not see are simply absent."""
    if not entity_ids:
        return {}
    rows = await session.execute(
        select(Entity).where(
            Entity.id.in_(set(entity_ids)), Entity.project_id.in_(member_project_ids(user_id))
        )
    )
    return {e.id: e for e in rows.scalars()}


async def list_entities(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    *,
    kind: str | None = None,
    state: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Sequence[Entity]:
    """Entities of a project, newest first, optionally filtered by kind and state."""
    project = await require_project(session, user_id, project_id)
    query = select(Entity).where(Entity.project_id == project.id)
    if kind is not None:
        if kind not in ENTITY_KINDS:
            raise ValidationError(f"unknown entity kind {kind!r}")
        query = query.where(Entity.kind == kind)
    if state is not None:
        query = query.where(Entity.state == state)
    query = query.order_by(Entity.updated_at.desc(), Entity.id).limit(max(1, min(limit, 1000))).offset(offset)
    return (await session.execute(query)).scalars().all()


async def update_entity(
    session: AsyncSession, user_id: uuid.UUID, entity_id: uuid.UUID | str, **changes: Any
) -> Entity:
    """Change an entity's fields; unknown fields and invalid values are rejected before writing."""
    unknown = set(changes) - set(ENTITY_FIELDS)
    if unknown:
        raise ValidationError(f"cannot change {', '.join(sorted(unknown))}")
    entity = await get_entity(session, user_id, entity_id)
    await require_project(session, user_id, entity.project_id, write=True)
    current = {f: getattr(entity, f) for f in ENTITY_FIELDS}
    validate_entity_spec(EntitySpec(kind=entity.kind, **{**current, **changes}))
    was_context = entity.is_context_document
    try:
        async with session.begin_nested():
            for field, value in changes.items():
                setattr(entity, field, value)
            await session.flush()
    except IntegrityError as exc:
        raise _what_conflicted(exc) from None
    if was_context != entity.is_context_document:  # it shows (or showed) in every entity's context
        await bump_project(session, entity.project_id)
    else:
        await bump_neighbourhood(session, entity)
    await session.refresh(entity, ["graph_version"])
    return entity


async def delete_entity(session: AsyncSession, user_id: uuid.UUID, entity_id: uuid.UUID | str) -> None:
    """Delete an entity and, by cascade, every edge touching it."""
    entity = await get_entity(session, user_id, entity_id)
    await require_project(session, user_id, entity.project_id, write=True)
    await bump_neighbourhood(session, entity)
    await session.delete(entity)
    await session.flush()


async def create_edge(
    session: AsyncSession,
    user_id: uuid.UUID,
    src_id: uuid.UUID | str,
    rel: str,
    dst_id: uuid.UUID | str,
    props: dict[str, Any] | None = None,
) -> Edge:
    """Create `src --rel--> dst` after validating it; a failed check writes nothing."""
    if rel not in RELATIONS:
        raise UnknownRelationError(f"unknown relation {rel!r}; expected one of {', '.join(RELATIONS)}")
    src_uuid, dst_uuid = as_uuid(src_id, "entity"), as_uuid(dst_id, "entity")
    if src_uuid == dst_uuid:
        raise ValidationError("an edge cannot connect an entity to itself")
    ends = await get_entities(session, user_id, [src_uuid, dst_uuid])
    for end in (src_uuid, dst_uuid):
        if end not in ends:
            raise NotFoundError("entity", end)
    src, dst = ends[src_uuid], ends[dst_uuid]
    if src.project_id != dst.project_id:
        raise CrossProjectEdgeError(
            f"entities {str(src.id)!r} and {str(dst.id)!r} are in different projects; "
            "edges connect entities of one project"
        )
    await require_project(session, user_id, src.project_id, write=True)
    edge = Edge(
        project_id=src.project_id,
        src_id=src.id,
        src_kind=src.kind,
        rel=rel,
        dst_id=dst.id,
        dst_kind=dst.kind,
        props=props or {},
    )
    try:
        async with session.begin_nested():
            session.add(edge)
    except IntegrityError:
        raise ConflictError(f"edge {src.id} --{rel}--> {dst.id} already exists") from None
    await bump_entities(session, [src.id, dst.id])
    return edge


async def delete_edge(session: AsyncSession, user_id: uuid.UUID, edge_id: uuid.UUID | str) -> Edge:
    """Delete one edge the user may write to; returns it so callers can invalidate caches."""
    eid = as_uuid(edge_id, "edge")
    edge = (
        await session.execute(
            select(Edge).where(Edge.id == eid, Edge.project_id.in_(member_project_ids(user_id)))
        )
    ).scalar_one_or_none()
    if edge is None:
        raise NotFoundError("edge", eid)
    await require_project(session, user_id, edge.project_id, write=True)
    await session.execute(delete(Edge).where(Edge.id == eid))
    await bump_entities(session, [edge.src_id, edge.dst_id])
    return edge


async def edges_of(session: AsyncSession, user_id: uuid.UUID, entity_id: uuid.UUID | str) -> Sequence[Edge]:
    """Every edge touching an entity, in both directions, in one query."""
    entity = await get_entity(session, user_id, entity_id)
    result = await session.execute(
        select(Edge)
        .where(or_(Edge.src_id == entity.id, Edge.dst_id == entity.id))
        .order_by(Edge.created_at, Edge.id)
    )
    return result.scalars().all()


async def count_by_kind(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str
) -> dict[str, int]:
    """Entity counts per kind for a project (zero for absent kinds)."""
    project = await require_project(session, user_id, project_id)
    rows = await session.execute(
        select(Entity.kind, func.count()).where(Entity.project_id == project.id).group_by(Entity.kind)
    )
    counts = dict.fromkeys(ENTITY_KINDS, 0)
    counts.update({kind: int(n) for kind, n in rows.all()})
    return counts


async def count_edges(session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str) -> int:
    """How many edges a project has."""
    project = await require_project(session, user_id, project_id)
    return int(
        (
            await session.execute(select(func.count()).select_from(Edge).where(Edge.project_id == project.id))
        ).scalar_one()
    )
