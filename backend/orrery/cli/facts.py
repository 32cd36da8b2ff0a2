"""`orrery facts`: what Orrery remembers about a person — list, add, correct and forget facts."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

import typer

from orrery.cli.common import out, resolve_user, run, with_db

facts_app = typer.Typer(help="Remembered facts about a person.", no_args_is_help=True)
User = Annotated[str, typer.Option(help="Whose facts (user id or email).")]
Kind = Annotated[str | None, typer.Option(help="fact, instruction (a standing instruction) or preference.")]
Project = Annotated[
    str | None,
    typer.Option("--project", help="The project an instruction or preference holds in (its id)."),
]
Everywhere = Annotated[
    bool, typer.Option("--global", help="An instruction or preference that holds in every project.")
]


def _line(fact: dict[str, Any]) -> str:
    kind = "" if fact["kind"] == "fact" else f" {fact['kind']}"
    kind += f" (project {fact['project_id']})" if fact["project_id"] else (" (every project)" if kind else "")
    about = f" [{fact['subject']}]" if fact["subject"] else ""
    since = f", true since {fact['valid_from']:%Y-%m-%d}" if fact["valid_from"] else ""
    gone = f" (replaced by {fact['superseded_by'] or 'a forgotten fact'})" if fact["superseded_at"] else ""
    source = f", from chat {fact['source']['session_id']} #{fact['source']['seq']}" if fact["source"] else ""
    return (
        f"{fact['id']}{kind}{about} {fact['text']} (noted {fact['created_at']:%Y-%m-%d}{since}{source}){gone}"
    )


def _date(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)") from None


@facts_app.command("list")
def facts_list(
    user: User,
    session: Annotated[str | None, typer.Option("--session", help="Only facts said in this chat.")] = None,
    history: Annotated[bool, typer.Option("--history", help="Also the facts newer ones replaced.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the facts as JSON.")] = False,
    kind: Kind = None,
) -> None:
    """USER's current facts, oldest first (as the API's `GET /v1/me/facts`); `--kind` only facts,
    instructions or preferences."""
    from orrery.repo import facts
    from orrery.services.facts import fact_out

    async def body(db: Any) -> list[dict[str, Any]]:
        async with db.sessions() as s:
            owner = await resolve_user(s, user)
            return [
                fact_out(f)
                for f in await facts.list_facts(
                    s, owner.id, history=history, source_session_id=session, kind=kind
                )
            ]

    rows = run(lambda st: with_db(st, body))
    if as_json:
        print(json.dumps(rows, default=str, indent=1))
    elif not rows:
        out.print("no remembered facts")
    for row in [] if as_json else rows:
        out.print(_line(row), markup=False, highlight=False)


@facts_app.command("add")
def facts_add(
    user: User,
    text: Annotated[str, typer.Argument(help="The fact, in one sentence.")],
    subject: Annotated[
        str | None, typer.Option(help="What it is about; a newer fact on it replaces the older.")
    ] = None,
    valid_from: Annotated[str | None, typer.Option(help="When it became true (YYYY-MM-DD).")] = None,
    supersedes: Annotated[str | None, typer.Option(help="The id of the fact this one replaces.")] = None,
    kind: Kind = None,
    project: Project = None,
    everywhere: Everywhere = False,
) -> None:
    """Remember a fact, instruction or preference about USER (added by hand: no source chat); an
    instruction or preference holds in `--project` or, by default or with `--global`, in every
    project. Prints its id."""
    from orrery.repo import facts

    when = _date(valid_from)
    if project and everywhere:
        raise typer.BadParameter("give --project or --global, not both")

    async def body(db: Any) -> Any:
        async with db.transaction() as s:
            owner = await resolve_user(s, user)
            fact, _ = await facts.create_fact(
                s,
                owner.id,
                text,
                subject=subject,
                valid_from=when,
                supersedes=supersedes,
                kind=kind,
                project_id=await facts.checked_project(s, owner.id, project),
            )
            return fact.id

    print(run(lambda st: with_db(st, body)))


@facts_app.command("edit")
def facts_edit(
    user: User,
    fact_id: Annotated[str, typer.Argument(help="The fact's id.")],
    text: Annotated[str | None, typer.Option(help="The corrected text.")] = None,
    subject: Annotated[str | None, typer.Option(help="The subject ('' clears it).")] = None,
    valid_from: Annotated[
        str | None, typer.Option(help="When it became true (YYYY-MM-DD; '' clears it).")
    ] = None,
    kind: Kind = None,
    project: Project = None,
    everywhere: Everywhere = False,
) -> None:
    """Correct one of USER's facts in place (`--kind`; `--project` or `--global` for where an
    instruction or preference holds)."""
    from orrery.repo import facts

    when: Any = facts.UNSET if valid_from is None else (_date(valid_from) if valid_from else None)
    about: Any = facts.UNSET if subject is None else (subject or None)
    if project and everywhere:
        raise typer.BadParameter("give --project or --global, not both")
    where: Any = project if project else (None if everywhere else facts.UNSET)

    async def body(db: Any) -> None:
        async with db.transaction() as s:
            owner = await resolve_user(s, user)
            await facts.update_fact(
                s, owner.id, fact_id, text=text, subject=about, valid_from=when, kind=kind, project_id=where
            )

    run(lambda st: with_db(st, body))
    out.print("fact updated")


@facts_app.command("forget")
def facts_forget(user: User, fact_id: Annotated[str, typer.Argument(help="The fact's id.")]) -> None:
    """Forget one of USER's facts and the older versions it replaced."""
    from orrery.repo import facts

    async def body(db: Any) -> int:
        async with db.transaction() as s:
            owner = await resolve_user(s, user)
            return len(await facts.delete_fact(s, owner.id, fact_id))

    gone = run(lambda st: with_db(st, body))
    out.print(f"fact forgotten{f' with {gone - 1} earlier version(s)' if gone > 1 else ''}")
