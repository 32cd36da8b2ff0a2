"""Small factories so tests read as the behaviour they check."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import Entity, Project, User
from orrery.repo import graph, identity


async def make_user(session: AsyncSession, name: str = "Ada") -> User:
    """A user with a profile and a unique email."""
    return await identity.create_user(session, f"{name.lower()}-{uuid.uuid4().hex[:8]}@example.org", name)


async def make_project(session: AsyncSession, owner: User, name: str = "Launch") -> Project:
    """A project owned by `owner`."""
    return await identity.create_project(session, owner.id, name)


async def make_entity(
    session: AsyncSession,
    owner: User,
    project: Project,
    kind: str = "task",
    name: str = "Write docs",
    **kw: Any,
) -> Entity:
    """An entity created through the repository (so validation runs)."""
    return await graph.create_entity(
        session, owner.id, project.id, graph.EntitySpec(kind=kind, name=name, **kw)
    )
