"""`orrery context`: inspect the working context and graph context an agent would see."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from orrery.cli.common import (
    acting_user,
    err,
    out,
    run,
    uuid_or_404,
    with_db,
)
from orrery.cli.receipt import receipt_table
from orrery.config import get_settings
from orrery.errors import OrreryError

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
    from orrery.agents.models import summarizer_for
    from orrery.context.compare import preview_context

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
    from orrery.agents.models import summarizer_for
    from orrery.cli.compare_view import print_comparison
    from orrery.context.compare import compare_strategies

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
    from orrery.db.models import ChatSession
    from orrery.errors import NotFoundError

    record = await session.get(ChatSession, uuid_or_404(session_id))
    if record is None:
        raise NotFoundError("session", session_id)
    return record.user_id


# The `build` options whose help does not fit beside them.
TemplateOption = Annotated[str | None, typer.Option(help="A template name (see `orrery context templates`).")]
QueryOption = Annotated[str | None, typer.Option(help="What the context is for; similar items rank higher.")]
OlderThanOption = Annotated[
    str | None, typer.Option(help="Leave out items untouched for this long (30d, 6m, 1y).")
]
KnowledgeOption = Annotated[
    bool, typer.Option("--knowledge/--no-knowledge", help="Let knowledge-base entries compete.")
]
ReferencesOption = Annotated[
    bool | None,
    typer.Option(
        "--include-references/--no-references", help="Follow references links (seed 003; default on)."
    ),
]
ChildrenOption = Annotated[
    bool | None,
    typer.Option("--include-children/--no-children", help="Follow has_task/contains links (default on)."),
]
ExistingOption = Annotated[
    typer.FileText | None,
    typer.Option(help="An earlier `--json` result (file, or - for stdin): return only new items."),
]
AdditionalBudgetOption = Annotated[
    int | None, typer.Option(help="With --existing: the token budget for the new items.")
]
UserOption = Annotated[
    str | None, typer.Option(help="Act as this user (id or email); default: the project owner.")
]


@context_app.command("build")
def context_build(
    seeds: Annotated[list[str], typer.Argument(help="Seed entity ids.")],
    budget: Annotated[int | None, typer.Option(help="Token budget (default 4000 or the template's).")] = None,
    strategy: Annotated[str | None, typer.Option(help="relevance, breadth, depth or semantic.")] = None,
    template: TemplateOption = None,
    fmt: Annotated[str | None, typer.Option("--format", help="structured, narrative or outline.")] = None,
    query: QueryOption = None,
    depth: Annotated[int | None, typer.Option(help="Override the traversal depth.")] = None,
    exclude_state: Annotated[list[str] | None, typer.Option(help="Leave out items in this state.")] = None,
    exclude_kind: Annotated[list[str] | None, typer.Option(help="Leave out items of this kind.")] = None,
    older_than: OlderThanOption = None,
    kind: Annotated[list[str] | None, typer.Option(help="Include only items of this kind.")] = None,
    relation: Annotated[list[str] | None, typer.Option(help="Follow only this relation.")] = None,
    knowledge: KnowledgeOption = True,
    references: ReferencesOption = None,
    children: ChildrenOption = None,
    existing: ExistingOption = None,
    additional_budget: AdditionalBudgetOption = None,
    user: UserOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole response structure.")] = False,
) -> None:
    """Build token-budgeted context around seed entities."""
    include = {
        "depth": depth,
        "kinds": kind or None,
        "relations": relation or None,
        "knowledge": None if knowledge else False,
        "references": references,
        "children": children,
    }
    exclude = {"states": exclude_state, "kinds": exclude_kind, "older_than": older_than}
    request = {
        "budget": budget,
        "strategy": strategy,
        "format": fmt,
        "template": template,
        "query": query,
        "existing_context": _earlier_result(existing),
        "additional_budget": additional_budget,
    }
    result = run(lambda s: with_db(s, _building(seeds, user, include, exclude, request)))
    _print_built(result, as_json)


def _earlier_result(existing: Any) -> Any:
    """The `--existing` result to extend, read before touching the database (a bad file exits 1)."""
    try:
        return json.loads(existing.read()) if existing is not None else None
    except json.JSONDecodeError as exc:
        err.print(f"[bold red]error:[/] --existing is not the JSON of an earlier result: {exc}")
        raise typer.Exit(1) from None


def _filters(template: str | None, include: dict[str, Any], exclude: dict[str, Any]) -> tuple[Any, Any]:
    """The template's include/exclude specs with the options given on the command line on top
    (unset options keep the template's); an invalid filter is a `ValidationError`, so exit 1."""
    from pydantic import ValidationError as PydanticValidationError

    from orrery.errors import ValidationError
    from orrery.graph.templates import ExcludeSpec, IncludeSpec, load_template

    tpl = load_template(template, get_settings().templates_dir) if template else None
    overrides = {k: v for k, v in include.items() if v is not None}
    changes = {k: v for k, v in exclude.items() if v}
    try:
        return (
            IncludeSpec.model_validate({**(tpl.include if tpl else IncludeSpec()).model_dump(), **overrides}),
            ExcludeSpec.model_validate({**(tpl.exclude if tpl else ExcludeSpec()).model_dump(), **changes}),
        )
    except PydanticValidationError as exc:
        raise ValidationError(f"bad filter: {exc.errors()[0]['msg']}") from None


def _building(
    seeds: list[str],
    user: str | None,
    include: dict[str, Any],
    exclude: dict[str, Any],
    request: dict[str, Any],
) -> Any:
    """The body that builds the context (errors inside it are `OrreryError`s `run` reports)."""
    from orrery.context.builder import build_context, resolve_request
    from orrery.tokens import counter_for

    async def body(db: Any) -> Any:
        settings = get_settings()
        included, excluded = _filters(request["template"], include, exclude)
        resolved = resolve_request(
            seeds, include=included, exclude=excluded, templates_dir=settings.templates_dir, **request
        )
        async with db.sessions() as session:
            user_id = await acting_user(session, user, seeds[0])
            return await build_context(session, user_id, resolved, counter_for(settings.model))

    return body


def _print_built(result: dict[str, Any], as_json: bool) -> None:
    """The budgeted text on stdout (exactly it, footer included), a one-line tally on stderr."""
    if as_json:
        print(json.dumps(result, default=str))
        return
    out.print(result["text"], markup=False, highlight=False, soft_wrap=True)
    meta = result["metadata"]
    err.print(
        f"[dim]{meta['items_included']} items · {meta['tokens_used']}/{meta['tokens_budget']} tokens · "
        f"{meta['items_excluded']} excluded · {meta['round_trips']} queries[/]"
    )


@context_app.command("templates")
def context_templates() -> None:
    """List the context templates with their defaults (and validate them)."""
    from orrery.graph.templates import list_templates

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
