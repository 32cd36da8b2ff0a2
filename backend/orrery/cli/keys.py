"""`orrery keys`: create, list and revoke API keys."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from orrery.cli.common import out, run, with_db
from orrery.cli.users import users_key

keys_app = typer.Typer(help="API keys: create, list, revoke.", no_args_is_help=True)


@keys_app.command("create")
def keys_create(
    email: Annotated[str, typer.Argument(help="The user's email.")],
    name: Annotated[str, typer.Option(help="A label for the key.")] = "default",
) -> None:
    """Issue an API key (shown once)."""
    users_key(email, name)


@keys_app.command("list")
def keys_list(email: Annotated[str, typer.Argument(help="The user's email.")]) -> None:
    """A user's keys: label, prefix, created, last used, revoked."""
    from sqlalchemy import select

    from orrery.db.models import ApiKey
    from orrery.repo import identity

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user = await identity.require_user_by_email(session, email)
            return (
                (
                    await session.execute(
                        select(ApiKey).where(ApiKey.user_id == user.id).order_by(ApiKey.created_at)
                    )
                )
                .scalars()
                .all()
            )

    table = Table(show_header=True)
    for column in ("name", "prefix", "created", "last used", "revoked"):
        table.add_column(column)
    for k in run(lambda s: with_db(s, body)):
        table.add_row(
            k.name,
            k.prefix,
            k.created_at.isoformat(timespec="minutes"),
            k.last_used_at.isoformat(timespec="minutes") if k.last_used_at else "-",
            k.revoked_at.isoformat(timespec="minutes") if k.revoked_at else "-",
        )
    out.print(table)


@keys_app.command("revoke")
def keys_revoke(
    email: Annotated[str, typer.Argument(help="The user's email.")],
    name: Annotated[str, typer.Option(help="The label of the key(s) to revoke.")] = "default",
) -> None:
    """Revoke every active key of a user with this label."""
    from orrery.repo import identity

    async def body(db: Any) -> int:
        async with db.transaction() as session:
            user = await identity.require_user_by_email(session, email)
            return await identity.revoke_api_keys(session, user.id, name)

    out.print(f"{run(lambda s: with_db(s, body))} key(s) revoked")
