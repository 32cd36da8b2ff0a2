"""`orrery users`: create users and issue their API keys."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from orrery.cli.common import (
    out,
    run,
    with_db,
)
from orrery.config import get_settings

users_app = typer.Typer(help="Users and API keys.", no_args_is_help=True)


@users_app.command("create")
def users_create(
    email: Annotated[str, typer.Argument(help="Email address (unique).")],
    name: Annotated[str, typer.Option(help="Display name.")],
    project: Annotated[str | None, typer.Option(help="Also create a project with this name.")] = None,
) -> None:
    """Create a user (with a profile) and print a new API key."""
    from orrery.repo import identity

    async def body(db: Any) -> tuple[Any, str, Any]:
        async with db.transaction() as session:
            user = await identity.create_user(session, email, name)
            _, key = await identity.issue_api_key(session, user.id, "default", get_settings().secret_key)
            proj = await identity.create_project(session, user.id, project) if project else None
            return user, key, proj

    user, key, proj = run(lambda s: with_db(s, body))
    out.print(f"user {user.id} created for {user.email}")
    if proj is not None:
        out.print(f"project {proj.id} created: {proj.name}")
    out.print(f"API key (shown once): [bold]{key}[/]")


@users_app.command("key")
def users_key(
    email: Annotated[str, typer.Argument(help="The user's email.")],
    name: Annotated[str, typer.Option(help="A label for the key.")] = "default",
) -> None:
    """Issue another API key for an existing user."""
    from orrery.repo import identity

    async def body(db: Any) -> str:
        async with db.transaction() as session:
            user = await identity.require_user_by_email(session, email)
            return (await identity.issue_api_key(session, user.id, name, get_settings().secret_key))[1]

    out.print(f"API key (shown once): [bold]{run(lambda s: with_db(s, body))}[/]")
