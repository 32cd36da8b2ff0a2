"""Linked entities of one entity: both edge directions, grouped by kind, in a single query.

One SQL statement unions outgoing edges, incoming edges and the project's context document (when
not already linked), joins the entity on the far end, ranks each kind with a window function
(active / in-progress first, then newest) and cuts at `max_per_type` while still counting all (and
how many of each kind are finished). Each row also counts the entity's own unfinished `depends_on`
targets (a correlated count on the edge index), so "not blocked" is known one hop further.
The cost does not grow with the number of edges beyond the rows returned.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import String, Uuid, and_, case, cast, exists, func, literal, null, or_, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from orrery.db.models import Edge, Entity
from orrery.errors import NotFoundError, ValidationError
from orrery.graph.edges import both_directions, far_entity
from orrery.graph.relation_roles import DONE_STATES
from orrery.repo.graph import get_entity
from orrery.repo.linked_cache import linked_cache
from orrery.vocabulary import ENTITY_KINDS

ACTIVE_STATES = ("active", "in_progress")
GROUPS: dict[str, str] = {
    "plan": "plans",
    "goal": "goals",
    "task": "tasks",
    "milestone": "milestones",
    "document": "documents",
    "output": "outputs",
}
"""Entity kind -> group name, in the order groups are shown."""
Direction = Literal["outgoing", "incoming", "project"]


@dataclass(frozen=True)
class LinkedEntity:
    """One entity linked to the source, with the edge that links it."""

    kind: str
    id: uuid.UUID
    name: str
    state: str
    type_key: str | None
    relation: str
    """The edge's relation, or `project_context` for the project's context document."""
    direction: Direction
    """`outgoing`: source --relation--> this; `incoming`: this --relation--> source."""
    edge_id: uuid.UUID | None
    description: str | None = None
    due_at: datetime | None = None
    is_context_document: bool = False
    open_dependencies: int = 0
    """How many unfinished entities this one `depends_on` (0: nothing it waits for is open)."""


@dataclass(frozen=True)
class EntityLinkedContext:
    """What the source is linked to, grouped by kind, with full counts."""

    source_kind: str
    source_id: uuid.UUID
    source_name: str
    linked: dict[str, list[LinkedEntity]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    truncated: bool = False
    done: dict[str, int] = field(default_factory=dict)
    """Finished entities per group (all of them, shown or not): progress without loading every row."""

    @property
    def total(self) -> int:
        """All linked entities, shown or not."""
        return sum(self.counts.values())


async def load_linked_entities_context(
    session: AsyncSession,
    user_id: uuid.UUID,
    entity_id: uuid.UUID | str,
    kind: str,
    project_id: uuid.UUID | str | None = None,
    *,
    max_per_type: int | None = 10,
    include_descriptions: bool = False,
    filter_kind: str | None = None,
) -> EntityLinkedContext:
    """Load the entity's links; unknown, foreign or mismatched ids are `NotFoundError`."""
    if kind not in ENTITY_KINDS:
        raise ValidationError(f"unknown entity kind {kind!r}; expected one of {', '.join(ENTITY_KINDS)}")
    filter_kind = None if filter_kind == "all" else filter_kind
    if filter_kind is not None and filter_kind not in ENTITY_KINDS:
        raise ValidationError(
            f"unknown filter kind {filter_kind!r}; expected 'all' or one of {', '.join(ENTITY_KINDS)}"
        )
    source = await get_entity(session, user_id, entity_id)
    if source.kind != kind or (project_id is not None and str(source.project_id) != str(project_id)):
        raise NotFoundError(kind, entity_id)
    return await linked_context_for(
        session,
        source,
        max_per_type=max_per_type,
        include_descriptions=include_descriptions,
        filter_kind=filter_kind,
    )


async def linked_context_for(
    session: AsyncSession,
    source: Entity,
    *,
    max_per_type: int | None = 10,
    include_descriptions: bool = False,
    filter_kind: str | None = None,
) -> EntityLinkedContext:
    """Linked context of an entity the caller already loaded (and authorized), cached per entity
    and valid while the entity's graph version is unchanged."""
    variant = (max_per_type, include_descriptions, filter_kind)
    version = source.graph_version  # read with the entity: any process's committed write shows here
    cached: EntityLinkedContext | None = linked_cache.get(source.id, variant, version)
    if cached is not None:
        return cached
    result = await _load(session, source, max_per_type, include_descriptions, filter_kind)
    linked_cache.put(source.id, variant, version, result)
    return result


async def _load(
    session: AsyncSession,
    source: Entity,
    max_per_type: int | None,
    descriptions: bool,
    filter_kind: str | None,
) -> EntityLinkedContext:
    """Run the one query and group its rows by kind."""
    rows = (await session.execute(_linked_query(source, max_per_type, filter_kind))).mappings().all()
    return _grouped(source, rows, descriptions)


def _linked_query(source: Entity, max_per_type: int | None, filter_kind: str | None) -> Any:
    """Edges both ways plus the project's context document, ranked within each kind (active
    first, then newest), cut at `max_per_type` while the window functions still count them all."""
    other = far_entity()
    columns = (
        other.kind,
        other.id,
        other.name,
        other.state,
        other.type_key,
        other.description,
        other.due_at,
        other.created_at,
        other.is_context_document,
        _open_dependencies(other),
    )
    visible = [other.is_scratch.is_(False)] + ([other.kind == filter_kind] if filter_kind else [])
    outgoing, incoming = both_directions([source.id], other, columns, visible)
    linked = union_all(outgoing, incoming, _context_document(source, other, columns, visible)).subquery()
    rank = case((linked.c.state.in_(ACTIVE_STATES), 0), else_=1)
    ranked = select(
        linked,
        func.row_number()
        .over(partition_by=linked.c.kind, order_by=(rank, linked.c.created_at.desc(), linked.c.id))
        .label("rn"),
        func.count().over(partition_by=linked.c.kind).label("kind_total"),
        func.sum(case((linked.c.state.in_(DONE_STATES), 1), else_=0))
        .over(partition_by=linked.c.kind)
        .label("kind_done"),
    ).subquery()
    query = select(ranked).order_by(ranked.c.kind, ranked.c.rn)
    return query if max_per_type is None else query.where(ranked.c.rn <= max_per_type)


def _context_document(source: Entity, other: Any, columns: tuple[Any, ...], visible: list[Any]) -> Any:
    """The project's context document as one more (pseudo-)link, unless an edge already links it."""
    already_linked = exists().where(
        or_(
            and_(Edge.src_id == source.id, Edge.dst_id == other.id),
            and_(Edge.dst_id == source.id, Edge.src_id == other.id),
        )
    )
    return select(
        cast(null(), Uuid).label("edge_id"),
        literal(source.id, Uuid).label("from_id"),
        literal("project_context", String).label("relation"),
        literal("project", String).label("direction"),
        *columns,
    ).where(
        other.project_id == source.project_id,
        other.is_context_document,
        other.id != source.id,
        ~already_linked,
        *visible,
    )


def _grouped(source: Entity, rows: Sequence[Any], descriptions: bool) -> EntityLinkedContext:
    """Rows into groups (every group present, empty or not), with each kind's full and done counts."""
    groups: dict[str, list[LinkedEntity]] = {name: [] for name in GROUPS.values()}
    counts = dict.fromkeys(GROUPS.values(), 0)
    done = dict.fromkeys(GROUPS.values(), 0)
    for row in rows:
        group = GROUPS[row["kind"]]
        counts[group] = int(row["kind_total"])
        done[group] = int(row["kind_done"] or 0)
        groups[group].append(_linked_entity(row, descriptions))
    return EntityLinkedContext(
        source_kind=source.kind,
        source_id=source.id,
        source_name=source.name,
        linked=groups,
        counts=counts,
        truncated=any(counts[g] > len(groups[g]) for g in groups),
        done=done,
    )


def _linked_entity(row: Any, descriptions: bool) -> LinkedEntity:
    """One row; the description only when asked for, a due date only on milestones."""
    return LinkedEntity(
        kind=row["kind"],
        id=row["id"],
        name=row["name"],
        state=row["state"],
        type_key=row["type_key"],
        relation=row["relation"],
        direction=row["direction"],
        edge_id=row["edge_id"],
        description=row["description"] if descriptions else None,
        due_at=row["due_at"] if row["kind"] == "milestone" else None,
        is_context_document=bool(row["is_context_document"]),
        open_dependencies=int(row["open_deps"] or 0),
    )


def _open_dependencies(other: Any) -> Any:
    """Correlated count of `other`'s outgoing `depends_on` edges to unfinished entities."""
    edge, target = aliased(Edge), aliased(Entity)
    return (
        select(func.count())
        .select_from(edge)
        .join(target, target.id == edge.dst_id)
        .where(edge.src_id == other.id, edge.rel == "depends_on", target.state.not_in(DONE_STATES))
        .correlate(other)
        .scalar_subquery()
        .label("open_deps")
    )
