"""`orrery context`: inspect the working context and graph context an agent would see."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from backend.cli.common import (
    acting_user,
    err,
    out,
    run,
    uuid_or_404,
    with_db,
)
from backend.cli.receipt import receipt_table
from backend.config import get_settings
from backend.errors import OrreryError

context_app = typer.Typer(help="Inspect the working context an agent would see.", no_args_is_help=True)


@context_app.command("show")
def context_show(
    session_id: Annotated[str, typer.Option("--session", help="Session id.")],
    agent: Annotated[
        str | None, typer.Option(help="Agent (default: the session's active agent, else coach).")
    ] = None,
    strategy: Annotated[str | None, typer.Option(help="Override the scoping strategy.")] = None,
    base_prompt: Annotated[
        str | None, typer.Option(help="Override the base prompt (default: the agent's own, as in a turn).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Emit {system_prompt, messages, receipt}.")] = False,
) -> None:
    """Assemble the working context for a session's current turn and show it with its receipt."""
    from backend.db.models import ChatSession
    from backend.errors import NotFoundError
    from backend.memory.working_context import assemble_working_context

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            record = await session.get(ChatSession, uuid_or_404(session_id))
            if record is None:
                raise NotFoundError("session", session_id)
            return await assemble_working_context(
                session,
                agent=agent or record.active_agent or "coach",
                base_prompt=base_prompt,
                session_id=record.id,
                user_id=record.user_id,
                settings=get_settings(),
                scoping=strategy,
            )

    context = run(lambda s: with_db(s, body))
    if as_json:
        print(
            json.dumps(
                {
                    "system_prompt": context.system_prompt,
                    "messages": context.messages,
                    "receipt": context.receipt.as_dict(),
                },
                default=str,
            )
        )
        return
    _print_context(context)


@context_app.command("build")
def context_build(
    seeds: Annotated[list[str], typer.Argument(help="Seed entity ids.")],
    budget: Annotated[int | None, typer.Option(help="Token budget (default 4000 or the template's).")] = None,
    strategy: Annotated[str | None, typer.Option(help="relevance, breadth, depth or semantic.")] = None,
    template: Annotated[
        str | None, typer.Option(help="A template name (see `orrery context templates`).")
    ] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="structured, narrative or outline.")] = None,
    query: Annotated[
        str | None, typer.Option(help="What the context is for; similar items rank higher.")
    ] = None,
    depth: Annotated[int | None, typer.Option(help="Override the traversal depth.")] = None,
    exclude_state: Annotated[list[str] | None, typer.Option(help="Leave out items in this state.")] = None,
    exclude_kind: Annotated[list[str] | None, typer.Option(help="Leave out items of this kind.")] = None,
    older_than: Annotated[
        str | None, typer.Option(help="Leave out items untouched for this long (30d, 6m, 1y).")
    ] = None,
    kind: Annotated[list[str] | None, typer.Option(help="Include only items of this kind.")] = None,
    relation: Annotated[list[str] | None, typer.Option(help="Follow only this relation.")] = None,
    knowledge: Annotated[
        bool, typer.Option("--knowledge/--no-knowledge", help="Let knowledge-base entries compete.")
    ] = True,
    existing: Annotated[
        typer.FileText | None,
        typer.Option(help="An earlier `--json` result (file, or - for stdin): return only new items."),
    ] = None,
    additional_budget: Annotated[
        int | None, typer.Option(help="With --existing: the token budget for the new items.")
    ] = None,
    user: Annotated[
        str | None, typer.Option(help="Act as this user (id or email); default: the project owner.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole response structure.")] = False,
) -> None:
    """Build token-budgeted context around seed entities."""
    from pydantic import ValidationError as PydanticValidationError

    from backend.errors import ValidationError
    from backend.graph.context_builder import build_context, resolve_request
    from backend.graph.templates import ExcludeSpec, IncludeSpec, load_template
    from backend.tokens import counter_for

    settings = get_settings()
    try:
        earlier = json.loads(existing.read()) if existing is not None else None
    except json.JSONDecodeError as exc:
        err.print(f"[bold red]error:[/] --existing is not the JSON of an earlier result: {exc}")
        raise typer.Exit(1) from None

    async def body(db: Any) -> Any:
        tpl = load_template(template, settings.templates_dir) if template else None
        overrides = {
            k: v
            for k, v in {
                "depth": depth,
                "kinds": kind or None,
                "relations": relation or None,
                "knowledge": None if knowledge else False,
            }.items()
            if v is not None
        }
        changes = {
            k: v
            for k, v in {"states": exclude_state, "kinds": exclude_kind, "older_than": older_than}.items()
            if v
        }
        try:
            include = IncludeSpec.model_validate(
                {**(tpl.include if tpl else IncludeSpec()).model_dump(), **overrides}
            )
            exclude = ExcludeSpec.model_validate(
                {**(tpl.exclude if tpl else ExcludeSpec()).model_dump(), **changes}
            )
        except PydanticValidationError as exc:
            raise ValidationError(f"bad filter: {exc.errors()[0]['msg']}") from None
        request = resolve_request(
            seeds,
            budget=budget,
            strategy=strategy,
            include=include,
            exclude=exclude,
            format=fmt,
            template=template,
            query=query,
            existing_context=earlier,
            additional_budget=additional_budget,
            templates_dir=settings.templates_dir,
        )
        async with db.sessions() as session:
            user_id = await acting_user(session, user, seeds[0])
            return await build_context(session, user_id, request, counter_for(get_settings().model))

    result = run(lambda s: with_db(s, body))
    if as_json:
        print(json.dumps(result, default=str))
        return
    out.print(result["text"], markup=False, highlight=False)
    meta = result["metadata"]
    out.print(
        f"\n[dim]{meta['items_included']} items · {meta['tokens_used']}/{meta['tokens_budget']} tokens · "
        f"{meta['items_excluded']} excluded · {meta['round_trips']} queries[/]"
    )


@context_app.command("templates")
def context_templates() -> None:
    """List the context templates with their defaults (and validate them)."""
    from backend.graph.templates import list_templates

    try:
        templates = list_templates(get_settings().templates_dir)
    except OrreryError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None
    table = Table(show_header=True)
    for column in ("name", "budget", "strategy", "format", "description"):
        table.add_column(column)
    for t in templates:
        table.add_row(t.name, str(t.budget or "-"), t.strategy or "-", t.format or "-", t.description)
    out.print(table)


def _print_context(context: Any) -> None:
    r = context.receipt
    out.rule(f"system prompt · {r.agent} · {r.model} ({r.encoding})")
    out.print(context.system_prompt, markup=False, highlight=False)
    out.rule(f"messages · {r.strategy}")
    for m in context.messages:
        out.print(f"[bold]{m['role']}:[/] ", end="")
        out.print(m["content"], markup=False, highlight=False)
    out.print(receipt_table(r))
    for note in r.notes:
        out.print(f"note: {note}")
