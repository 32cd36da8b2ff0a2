"""A project at a glance: counts by kind and state, edges, knowledge base, activity.

A fixed number of grouped queries, whatever the project's size.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import ChatSession, CheckIn, Edge, Entity, KbCollection, KbEntry, KbRelation
from orrery.repo.scope import require_project
from orrery.vocabulary import ENTITY_KINDS


@dataclass(frozen=True)
class ProjectSummary:
    """Counts that describe a workspace; what `orrery demo summary` and `GET /v1/projects/{id}` show."""

    project_id: uuid.UUID
    name: str
    description: str | None
    entities: dict[str, int]
    task_states: dict[str, int]
    edges: int
    context_document: str | None
    kb_collections: dict[str, int] = field(default_factory=dict)
    kb_relations: int = 0
    check_ins: int = 0
    last_check_in: datetime | None = None
    chat_sessions: int = 0


async def project_summary(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str
) -> ProjectSummary:
    """Summarize one of the user's projects."""
    project = await require_project(session, user_id, project_id)
    pid = project.id
    kinds, task_states = await _entity_counts(session, pid)
    edges = (
        await session.execute(select(func.count()).select_from(Edge).where(Edge.project_id == pid))
    ).scalar_one()
    context_doc = (
        await session.execute(select(Entity.name).where(Entity.project_id == pid, Entity.is_context_document))
    ).scalar_one_or_none()
    collections, kb_relations = await _knowledge_counts(session, pid)
    check_ins, last, sessions = await _activity(session, user_id, pid)
    return ProjectSummary(
        project_id=pid,
        name=project.name,
        description=project.description,
        entities=kinds,
        task_states=task_states,
        edges=int(edges),
        context_document=context_doc,
        kb_collections=collections,
        kb_relations=kb_relations,
        check_ins=check_ins,
        last_check_in=last,
        chat_sessions=sessions,
    )


async def _entity_counts(session: AsyncSession, pid: uuid.UUID) -> tuple[dict[str, int], dict[str, int]]:
    """Entities per kind (every kind, zeros too) and tasks per state (sorted), from one grouped query."""
    kinds = dict.fromkeys(ENTITY_KINDS, 0)
    states: dict[str, int] = {}
    rows = await session.execute(
        select(Entity.kind, Entity.state, func.count())
        .where(Entity.project_id == pid)
        .group_by(Entity.kind, Entity.state)
    )
    for kind, state, n in rows.all():
        kinds[kind] += n
        if kind == "task":
            states[state] = n
    return kinds, dict(sorted(states.items()))


async def _knowledge_counts(session: AsyncSession, pid: uuid.UUID) -> tuple[dict[str, int], int]:
    """Entries per knowledge collection (in priority order, empty ones included) and relations."""
    kb = await session.execute(
        select(KbCollection.slug, func.count(KbEntry.id))
        .outerjoin(KbEntry, KbEntry.collection_id == KbCollection.id)
        .where(KbCollection.project_id == pid)
        .group_by(KbCollection.slug, KbCollection.priority)
        .order_by(KbCollection.priority, KbCollection.slug)
    )
    collections = {slug: int(n) for slug, n in kb.all()}
    relations = (
        await session.execute(
            select(func.count()).select_from(KbRelation).where(KbRelation.project_id == pid)
        )
    ).scalar_one()
    return collections, int(relations)


async def _activity(
    session: AsyncSession, user_id: uuid.UUID, pid: uuid.UUID
) -> tuple[int, datetime | None, int]:
    """This user's check-ins (how many, the last one's time) and chat sessions in the project."""
    check_ins, last = (
        await session.execute(
            select(func.count(), func.max(CheckIn.created_at)).where(
                CheckIn.user_id == user_id, CheckIn.project_id == pid
            )
        )
    ).one()
    sessions = (
        await session.execute(
            select(func.count())
            .select_from(ChatSession)
            .where(ChatSession.user_id == user_id, ChatSession.project_id == pid)
        )
    ).scalar_one()
    return int(check_ins), last, int(sessions)
