"""`orrery memory`: a person's memory choices, as `GET`/`PATCH /v1/me/memory` hold them: whether
their chats recall their other chats, and chats of other projects; and the timeline of their earlier
chats that a new chat draws on."""

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


@memory_app.command("timeline")
def memory_timeline(
    user: UserArg,
    project: Annotated[
        str | None, typer.Option(help="Project id (default: chats without a project).")
    ] = None,
    build: Annotated[
        bool, typer.Option("--build", help="Build missing or stale digests now, quiet or not.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the chats as JSON.")] = False,
) -> None:
    """The "Earlier chats" timeline a new chat of USER (in PROJECT) would draw on: one dated line per
    chat recall may read, newest first, with its digest (unbudgeted; `orrery context show` has the
    budgeted one)."""
    from orrery.context.timeline import read_entries
    from orrery.db.base import utcnow
    from orrery.memory.digests import digest_all
    from orrery.repo.scope import require_project

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            owner = await resolve_user(session, user)
            pid = (await require_project(session, owner.id, project)).id if project else None
            entries = await read_entries(session, owner.id, None, pid)
        if build:
            await digest_all(db, [e.id for e in entries], utcnow())
            async with db.sessions() as session:
                entries = await read_entries(session, owner.id, None, pid)
        return entries

    entries = run(lambda s: with_db(s, body))
    if as_json:
        rows = [
            {"chat_id": str(e.id), "date": e.day.isoformat(), "title": e.title, "digest": e.digest}
            for e in entries
        ]
        print(json.dumps(rows))
        return
    if not entries:
        out.print("no earlier chats recall may read")
    for e in entries:
        out.print(e.line(), markup=False, highlight=False)
