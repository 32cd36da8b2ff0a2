"""User scoping: the one place that decides whether a user may see or change a project.

Anything the user may not see answers `NotFoundError`, exactly as if it did not exist.
"""

from __future__ import annotations

import uuid
from functools import cache

from sqlalchemy import BindParameter, Select, Uuid, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import Project, ProjectMember
from orrery.errors import NotFoundError, ValidationError

WRITE_ROLES = ("owner", "editor")


def member_project_ids(user_id: uuid.UUID | BindParameter[uuid.UUID]) -> Select[uuid.UUID]:
    """A subquery of the project ids the user belongs to (`user_id` may be a bound parameter, for a
    statement built once and run for any user)."""
    return select(ProjectMember.project_id).where(ProjectMember.user_id == user_id)


def as_uuid(value: uuid.UUID | str, kind: str) -> uuid.UUID:
    """Parse an id from user input; a malformed id is simply not found."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise NotFoundError(kind, value) from None


@cache
def _membership() -> Select[Project, str]:
    """The project and the user's role in it (ids bound per call), built once per process: it runs
    on most requests."""
    project, user = bindparam("pid", type_=Uuid()), bindparam("uid", type_=Uuid())
    return (
        select(Project, ProjectMember.role)
        .join(ProjectMember, ProjectMember.project_id == Project.id)
        .where(Project.id == project, ProjectMember.user_id == user)
    )


async def require_project(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, *, write: bool = False
) -> Project:
    """The project if the user is a member (an owner or editor when `write`), else not found."""
    pid = as_uuid(project_id, "project")
    row = (await session.execute(_membership(), {"pid": pid, "uid": user_id})).first()
    if row is None:
        raise NotFoundError("project", pid)
    project, role = row
    if write and role not in WRITE_ROLES:
        raise ValidationError(f"project {str(pid)!r} is read-only for you (role {role!r})")
    return project
