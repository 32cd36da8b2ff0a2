"""Graph version stamps: how linked-entity caches stay coherent across processes.

Every write that changes what an entity's linked context shows bumps `entities.graph_version` of the
affected entities in the same transaction: both ends of a created or deleted edge; an updated or
deleted entity and its neighbours; every entity of the project when the project's context document
(shown to all of them) is created, changed or deleted. A cache entry remembers the version it was
built at and counts only while the entity still has it, so a write committed by any process is seen
by every other one on its next read (the version comes with the entity row each read loads anyway).
The writing process also drops its own entries at once (`linked_cache.invalidate`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import select, union, update
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import Edge, Entity
from orrery.repo.linked_cache import linked_cache


def _bump() -> dict[str, object]:
    # updated_at is assigned to itself so its ORM `onupdate` does not fire: a neighbour's edit is
    # not an edit of this entity (build_context's recency reads updated_at)
    return {"graph_version": Entity.graph_version + 1, "updated_at": Entity.updated_at}


async def bump_entities(session: AsyncSession, ids: Iterable[uuid.UUID]) -> None:
    """Bump these entities' versions (both ends of an edge): one statement."""
    wanted = list(dict.fromkeys(ids))
    await session.execute(
        update(Entity)
        .where(Entity.id.in_(wanted))
        .values(**_bump())
        .execution_options(synchronize_session=False)
    )
    linked_cache.invalidate(*wanted)


async def bump_neighbourhood(session: AsyncSession, entity: Entity) -> None:
    """Bump an entity and everything linked to it; the whole project when it is the context
    document. One statement (plus one to learn the neighbours for this process's own cache)."""
    if entity.is_context_document:
        await bump_project(session, entity.project_id)
        return
    neighbours = union(
        select(Edge.src_id).where(Edge.dst_id == entity.id),
        select(Edge.dst_id).where(Edge.src_id == entity.id),
    )
    await bump_entities(session, [entity.id, *(await session.execute(neighbours)).scalars()])


async def bump_project(session: AsyncSession, project_id: uuid.UUID) -> None:
    """Bump every entity of a project (a new context document shows in all their contexts)."""
    await session.execute(
        update(Entity)
        .where(Entity.project_id == project_id)
        .values(**_bump())
        .execution_options(synchronize_session=False)
    )
    linked_cache.clear()
