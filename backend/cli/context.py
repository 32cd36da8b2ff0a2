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
    strategy: Annotated[str | None, typer.Option(help="Preview with this scoping strategy.")] = None,
    compare: Annotated[
        str | None,
        typer.Option(help="Compare scoping strategies, comma-separated (e.g. last_n,relevance)."),
    ] = None,
    at: Annotated[
        int | None, typer.Option(min=1, help="The view the turn answering this user message (seq) had.")
    ] = None,
    base_prompt: Annotated[
        str | None, typer.Option(help="Override the base prompt (default: the agent's own, as in a turn).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Emit {system_prompt, messages, receipt} (or the comparison).")
    ] = False,
) -> None:
    """Assemble the working context for a session's next turn (or the turn at `--at`) and show it
    with its receipt; `--compare` lines several strategies up instead. Nothing is stored."""
    if compare is not None and (strategy is not None or base_prompt is not None):
        err.print("[bold red]error:[/] --compare runs each strategy itself: drop --strategy/--base-prompt")
        raise typer.Exit(1)
    if compare is not None:
        _show_comparison(session_id, agent, compare, at, as_json)
        return
    context = run(lambda s: with_db(s, _previewing(session_id, agent, strategy, at, base_prompt)))
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


def _previewing(
    session_id: str, agent: str | None, strategy: str | None, at: int | None, base_prompt: str | None
) -> Any:
    """The body that assembles one preview (as the session's owner: the CLI has database access)."""
    from backend.context.compare import preview_context
    from backend.services.context_view import summarizer_for

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            owner = await _owner(session, session_id)
            return await preview_context(
                session,
                user_id=owner,
                session_id=session_id,
                settings=get_settings(),
                agent=agent,
                scoping=strategy,
                at=at,
                base_prompt=base_prompt,
                summarizer=summarizer_for(get_settings()),
            )

    return body


def _show_comparison(session_id: str, agent: str | None, names: str, at: int | None, as_json: bool) -> None:
    from backend.cli.compare_view import print_comparison
    from backend.context.compare import compare_strategies
    from backend.services.context_view import summarizer_for

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            owner = await _owner(session, session_id)
            return await compare_strategies(
                session,
                user_id=owner,
                session_id=session_id,
                names=names,
                settings=get_settings(),
                agent=agent,
                at=at,
                summarizer=summarizer_for(get_settings()),
            )

    comparison = run(lambda s: with_db(s, body))
    if as_json:
        print(json.dumps(comparison.as_dict(), default=str))
        return
    print_comparison(comparison)


async def _owner(session: Any, session_id: str) -> Any:
    """The user owning the session, or a `NotFoundError`."""
    from backend.db.models import ChatSession
    from backend.errors import NotFoundError

    record = await session.get(ChatSession, uuid_or_404(session_id))
    if record is None:
        raise NotFoundError("session", session_id)
    return record.user_id


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
    references: Annotated[
        bool | None,
        typer.Option(
            "--include-references/--no-references", help="Follow references links (seed 003; default on)."
        ),
    ] = None,
    children: Annotated[
        bool | None,
        typer.Option("--include-children/--no-children", help="Follow has_task/contains links (default on)."),
    ] = None,
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

    from backend.context.builder import build_context, resolve_request
    from backend.errors import ValidationError
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
                "references": references,
                "children": children,
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
    out.print(result["text"], markup=False, highlight=False, soft_wrap=True)  # footer inside the budget
    meta = result["metadata"]
    err.print(  # on stderr: stdout is exactly the budgeted text
        f"[dim]{meta['items_included']} items · {meta['tokens_used']}/{meta['tokens_budget']} tokens · "
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
