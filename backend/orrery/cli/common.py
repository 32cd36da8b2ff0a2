"""Shared helpers of the CLI: run an async body, open the database, resolve users and projects."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from orrery.config import Settings, get_settings
from orrery.errors import OrreryError

T = TypeVar("T")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def run(factory: Callable[[Settings], Coroutine[Any, Any, T]]) -> T:
    """Run an async command body; an `OrreryError` becomes a one-line message and exit code 1, as
    does an argument that cannot be stored (undecodable bytes arrive as lone surrogates)."""
    from orrery.validation import unstorable

    for argument in sys.argv[1:]:
        problem = unstorable(argument)
        if problem is not None:
            err.print(f"[bold red]error:[/] an argument contains {problem}, which cannot be stored")
            raise typer.Exit(1)
    try:
        return asyncio.run(factory(get_settings()))
    except OrreryError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None


async def with_db(settings: Settings, body: Callable[[Any], Awaitable[T]], *, check: bool = True) -> T:
    from orrery.db.engine import Database
    from orrery.db.migrations import ensure_current
    from orrery.memory.history_cache import configure_history_cache
    from orrery.repo.linked_cache import configure_linked_cache

    configure_linked_cache(settings.linked_cache_ttl_seconds, settings.linked_cache_size)
    configure_history_cache(settings.history_cache_mb)
    db = Database.from_settings(settings)
    try:
        if check:
            await ensure_current(db.engine)
        return await body(db)
    finally:
        await db.dispose()


def where(settings: Settings) -> str:
    from sqlalchemy.engine import make_url

    return make_url(settings.database_url).render_as_string(hide_password=True)


async def resolve_user(session: Any, user: str) -> Any:
    """A user by id or email."""
    from orrery.errors import NotFoundError
    from orrery.repo import identity

    if "@" in user:
        found = await identity.find_user_by_email(session, user)
        if found is None:
            raise NotFoundError("user", user)
        return found
    return await identity.get_user(session, user)


def uuid_or_404(value: str) -> Any:
    from orrery.repo.scope import as_uuid

    return as_uuid(value, "session")


async def acting_user(session: Any, user: str | None, entity_id: str) -> Any:
    """The given user, or the owner of the entity's project (the CLI runs with database access)."""
    from sqlalchemy import select

    from orrery.db.models import Entity, Project
    from orrery.errors import NotFoundError
    from orrery.repo.scope import as_uuid

    if user is not None:
        return (await resolve_user(session, user)).id
    owner = (
        await session.execute(
            select(Project.owner_id)
            .join(Entity, Entity.project_id == Project.id)
            .where(Entity.id == as_uuid(entity_id, "entity"))
        )
    ).scalar_one_or_none()
    if owner is None:
        raise NotFoundError("entity", entity_id)
    return owner


async def entity_kind(session: Any, user_id: Any, entity_id: str) -> str:
    from orrery.repo.graph import get_entity

    kind: str = (await get_entity(session, user_id, entity_id)).kind
    return kind


ProjectOpt = Annotated[
    str | None, typer.Option("--project", help="Project id (default: the only one with a KB).")
]
UserOpt = Annotated[
    str | None, typer.Option(help="Act as this user (id or email); default: the project owner.")
]


def the_only_project(rows: Sequence[tuple[Any, str]], what: str) -> str:
    """The id of the one project in `rows` (id, name); none or several is a `ValidationError` that
    every project-needing command words the same way."""
    from orrery.errors import ValidationError

    if not rows:
        raise ValidationError(
            f"no project {what} yet; load the demo (`orrery demo load`) or pass --project ID"
        )
    if len(rows) > 1:
        shown = ", ".join(f"{pid} ({name})" for pid, name in rows[:5])
        more = " ..." if len(rows) > 5 else ""
        raise ValidationError(f"several projects {what}; pass --project ID, one of: {shown}{more}")
    return str(rows[0][0])


async def kb_scope(session: Any, project: str | None, user: str | None) -> tuple[Any, Any]:
    """(user id, project id) for KB commands: the given project, or the only one that has entries
    (among the user's own projects when `--user` is given)."""
    from sqlalchemy import select

    from orrery.db.models import KbEntry, Project
    from orrery.errors import NotFoundError
    from orrery.repo.scope import as_uuid

    user_id = (await resolve_user(session, user)).id if user else None
    if project is None:
        query = select(Project.id, Project.name).where(Project.id.in_(select(KbEntry.project_id).distinct()))
        rows = (await session.execute(_own(query, user_id).order_by(Project.created_at).limit(6))).all()
        project = the_only_project([tuple(r) for r in rows], "have a knowledge base")
    owner = (
        await session.execute(select(Project.owner_id).where(Project.id == as_uuid(project, "project")))
    ).scalar()
    if owner is None:
        raise NotFoundError("project", project)
    return user_id or owner, as_uuid(project, "project")


def _own(query: Any, user_id: Any) -> Any:
    """`query` narrowed to the user's projects (every project when no user is named)."""
    from orrery.db.models import Project
    from orrery.repo.scope import member_project_ids

    return query if user_id is None else query.where(Project.id.in_(member_project_ids(user_id)))


async def project_scope(session: Any, project: str | None, user: str | None) -> tuple[Any, Any]:
    """(user id, project id): the given project, or the only project there is (the only one of the
    user's own when `--user` is given: another person's projects are never listed)."""
    from sqlalchemy import select

    from orrery.db.models import Project

    if project is None:
        user_id = (await resolve_user(session, user)).id if user else None
        query = _own(select(Project.id, Project.name), user_id)
        rows = (await session.execute(query.order_by(Project.created_at).limit(6))).all()
        project = the_only_project([tuple(r) for r in rows], "exist" if user is None else "of yours")
    return await kb_scope(session, project, user)


def print_scoped_json(project: str | None, user: str | None, read: Any) -> None:
    """Run `read(session, user_id, project_id)` for the resolved project and print its JSON."""

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id, project_id = await project_scope(session, project, user)
            return await read(session, user_id, project_id)

    print(json.dumps(run(lambda s: with_db(s, body)), indent=1, default=str))
