"""`orrery memory`: a person's memory choices, as `GET`/`PATCH /v1/me/memory` hold them: whether
their chats recall their other chats, and chats of other projects."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated, Any

import typer

from orrery.cli.common import err, out, resolve_user, run, with_db

memory_app = typer.Typer(
    help="What a person's chats may recall from their other chats.", no_args_is_help=True
)
UserArg = Annotated[str, typer.Option(help="User id or email.")]


def _print(choices: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(asdict(choices)))
        return
    on = {True: "on", False: "off"}
    out.print(f"recall across chats: {on[choices.recall_across_chats]}")
    out.print(f"recall from other projects: {on[choices.recall_other_projects]}")


@memory_app.command("show")
def memory_show(
    user: UserArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print the choices as JSON.")] = False,
) -> None:
    """USER's memory choices."""
    from orrery.repo import identity

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            return await identity.memory_choices(session, (await resolve_user(session, user)).id)

    _print(run(lambda s: with_db(s, body)), as_json)


@memory_app.command("set")
def memory_set(
    user: UserArg,
    across: Annotated[
        bool | None,
        typer.Option(
            "--recall-across-chats/--no-recall-across-chats", help="Recall the person's other chats."
        ),
    ] = None,
    other_projects: Annotated[
        bool | None,
        typer.Option("--other-projects/--no-other-projects", help="Also from chats in other projects."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the new choices as JSON.")] = False,
) -> None:
    """Change USER's memory choices (the ones given; the others stay)."""
    from orrery.repo import identity

    if across is None and other_projects is None:
        err.print(
            "[bold red]error:[/] nothing to change: pass --[no-]recall-across-chats or --[no-]other-projects"
        )
        raise typer.Exit(2)

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            owner = await resolve_user(session, user)
            return await identity.set_memory_choices(
                session, owner.id, recall_across_chats=across, recall_other_projects=other_projects
            )

    _print(run(lambda s: with_db(s, body)), as_json)
