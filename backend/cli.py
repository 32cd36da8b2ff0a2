"""The `orrery` command line: serve, database migrations, demo and synthetic workspaces, users.

Heavy modules are imported inside the commands so `orrery --help` stays instant.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Annotated, Any, Literal, TypeVar, cast

import typer
from rich.console import Console
from rich.table import Table

from backend.config import Settings, get_settings
from backend.errors import OrreryError

T = TypeVar("T")

app = typer.Typer(help="Orrery: a backend for chat assistants that work in context.", no_args_is_help=True)
db_app = typer.Typer(help="Database migrations.", no_args_is_help=True)
demo_app = typer.Typer(help="Demo and synthetic workspaces.", no_args_is_help=True)
users_app = typer.Typer(help="Users and API keys.", no_args_is_help=True)
sessions_app = typer.Typer(help="Chat sessions.", no_args_is_help=True)
context_app = typer.Typer(help="Inspect the working context an agent would see.", no_args_is_help=True)
docs_app = typer.Typer(
    help="Document index: chunk PRD, OpenAPI and schema files; story context.", no_args_is_help=True
)
keys_app = typer.Typer(help="API keys: create, list, revoke.", no_args_is_help=True)
kb_app = typer.Typer(
    help="Knowledge base: search, load context for a task, read entries.", no_args_is_help=True
)
app.add_typer(db_app, name="db")
app.add_typer(sessions_app, name="sessions")
app.add_typer(context_app, name="context")
app.add_typer(kb_app, name="kb")
app.add_typer(keys_app, name="keys")
app.add_typer(docs_app, name="docs")
app.add_typer(demo_app, name="demo")
app.add_typer(users_app, name="users")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def _run(factory: Callable[[Settings], Coroutine[Any, Any, T]]) -> T:
    """Run an async command body; an `OrreryError` becomes a one-line message and exit code 1."""
    try:
        return asyncio.run(factory(get_settings()))
    except OrreryError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None


async def _with_db(settings: Settings, body: Callable[[Any], Awaitable[T]], *, check: bool = True) -> T:
    from backend.db.engine import Database
    from backend.db.migrations import ensure_current
    from backend.graph.cache import configure_linked_cache

    configure_linked_cache(settings.linked_cache_ttl_seconds)
    db = Database.from_settings(settings)
    try:
        if check:
            await ensure_current(db.engine)
        return await body(db)
    finally:
        await db.dispose()


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind (default ORRERY_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default ORRERY_PORT).")] = None,
) -> None:
    """Start the HTTP API (refuses an un-migrated database)."""
    import uvicorn

    async def check(settings: Settings) -> None:
        await _with_db(settings, lambda _db: asyncio.sleep(0))

    _run(check)
    settings = get_settings()
    uvicorn.run(
        "backend.api.app:create_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        log_level=settings.log_level,
    )


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Apply migrations up to REVISION (default: the newest)."""
    from backend.db.migrations import upgrade

    settings = get_settings()
    upgrade(settings.database_url, revision)
    out.print(f"database migrated to {revision} ({_where(settings)})")


@db_app.command("downgrade")
def db_downgrade(revision: Annotated[str, typer.Argument(help="Target revision, e.g. 'base'.")]) -> None:
    """Revert migrations down to REVISION."""
    from backend.db.migrations import downgrade

    settings = get_settings()
    downgrade(settings.database_url, revision)
    out.print(f"database downgraded to {revision} ({_where(settings)})")


@db_app.command("current")
def db_current() -> None:
    """Show the database's revision and whether it is up to date."""
    from backend.db.migrations import current_revision, head_revision

    async def body(db: Any) -> str | None:
        return await current_revision(db.engine)

    current = _run(lambda s: _with_db(s, body, check=False))
    head = head_revision()
    state = "up to date" if current == head else "needs `orrery db upgrade`"
    out.print(f"current: {current or '(none)'}  head: {head}  -> {state}")
    if current != head:
        raise typer.Exit(1)


def _where(settings: Settings) -> str:
    from sqlalchemy.engine import make_url

    return make_url(settings.database_url).render_as_string(hide_password=True)


@demo_app.command("load")
def demo_load(
    as_json: Annotated[bool, typer.Option("--json", help="Print ids and the API key as JSON.")] = False,
    if_empty: Annotated[
        bool, typer.Option("--if-empty", help="Do nothing unless the database has no users.")
    ] = False,
) -> None:
    """Create the demo workspace (idempotent; rotates the demo API key)."""
    from backend.demo.workspace import load_demo
    from backend.repo.identity import count_users

    async def body(db: Any) -> Any:
        if if_empty:
            async with db.sessions() as session:
                if await count_users(session) > 0:
                    return None
        return await load_demo(db, get_settings().secret_key)

    demo = _run(lambda s: _with_db(s, body))
    if demo is None:
        if not as_json:
            out.print("database already has users; demo not loaded (drop --if-empty to load it anyway)")
        return
    if as_json:
        print(json.dumps(demo.as_json()))
        return
    verb = "created" if demo.created else "already present"
    out.print(f"demo workspace {verb}: project {demo.project_id}")
    out.print(f"API key (shown once): [bold]{demo.api_key}[/]")
    out.print(f"focus task: {demo.focus['task']}")


@demo_app.command("synth")
def demo_synth(
    entities: Annotated[int, typer.Option(help="How many entities.")] = 1000,
    edges_per_entity: Annotated[int, typer.Option(help="Edges each entity starts.")] = 3,
    kb_entries: Annotated[int, typer.Option(help="Knowledge-base entries.")] = 100,
    seed: Annotated[int, typer.Option(help="Random seed; same seed, same workspace.")] = 42,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Generate a large, reproducible workspace with bulk inserts."""
    from backend.demo.synth import synthesize

    async def body(db: Any) -> Any:
        return await synthesize(
            db,
            entities=entities,
            edges_per_entity=edges_per_entity,
            kb_entries=kb_entries,
            seed=seed,
            server_secret=get_settings().secret_key,
        )

    started = time.perf_counter()
    result = _run(lambda s: _with_db(s, body))
    seconds = round(time.perf_counter() - started, 2)
    data = {
        "user_id": str(result.user_id),
        "project_id": str(result.project_id),
        "api_key": result.api_key,
        "entities": result.entities,
        "edges": result.edges,
        "kb_entries": result.kb_entries,
        "kb_relations": result.kb_relations,
        "digest": result.digest,
        "created": result.created,
        "focus": {"task": str(result.focus_task_id) if result.focus_task_id else None},
        "seconds": seconds,
    }
    if as_json:
        print(json.dumps(data))
        return
    verb = "generated" if result.created else "already present"
    out.print(
        f"synthetic workspace {verb} in {seconds}s: {result.entities} entities, {result.edges} edges, "
        f"{result.kb_entries} KB entries, {result.kb_relations} KB relations"
    )
    out.print(f"project {result.project_id}  digest {result.digest or '(computed on first run)'}")
    out.print(f"API key (shown once): [bold]{result.api_key}[/]")


@demo_app.command("summary")
def demo_summary(
    email: Annotated[str, typer.Option(help="Whose workspace to show.")] = "maya@demo.orrery.dev",
) -> None:
    """Print a summary of a user's projects (the demo user by default)."""
    from backend.repo import identity
    from backend.repo.summary import project_summary

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user = await identity.require_user_by_email(session, email)
            projects = await identity.list_projects(session, user.id)
            return user, [await project_summary(session, user.id, p.id) for p in projects]

    user, summaries = _run(lambda s: _with_db(s, body))
    out.print(f"[bold]{user.display_name}[/] <{user.email}>  user {user.id}")
    for s in summaries:
        _print_summary(s)


def _print_summary(s: Any) -> None:
    out.print(f"\n[bold]{s.name}[/]  project {s.project_id}")
    table = Table(show_header=True)
    table.add_column("what")
    table.add_column("count", justify="right")
    for kind, n in s.entities.items():
        table.add_row(f"{kind}s", str(n))
    table.add_row("edges", str(s.edges))
    for slug, n in s.kb_collections.items():
        table.add_row(f"kb: {slug}", str(n))
    table.add_row("kb relations", str(s.kb_relations))
    table.add_row("check-ins", str(s.check_ins))
    table.add_row("chat sessions", str(s.chat_sessions))
    out.print(table)
    states = ", ".join(f"{state} {n}" for state, n in s.task_states.items())
    out.print(f"tasks by state: {states or '-'}")
    out.print(f"context document: {s.context_document or '-'}")
    if s.last_check_in:
        out.print(f"last check-in: {s.last_check_in.isoformat(timespec='minutes')}")


@users_app.command("create")
def users_create(
    email: Annotated[str, typer.Argument(help="Email address (unique).")],
    name: Annotated[str, typer.Option(help="Display name.")],
    project: Annotated[str | None, typer.Option(help="Also create a project with this name.")] = None,
) -> None:
    """Create a user (with a profile) and print a new API key."""
    from backend.repo import identity

    async def body(db: Any) -> tuple[Any, str, Any]:
        async with db.transaction() as session:
            user = await identity.create_user(session, email, name)
            _, key = await identity.issue_api_key(session, user.id, "default", get_settings().secret_key)
            proj = await identity.create_project(session, user.id, project) if project else None
            return user, key, proj

    user, key, proj = _run(lambda s: _with_db(s, body))
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
    from backend.repo import identity

    async def body(db: Any) -> str:
        async with db.transaction() as session:
            user = await identity.require_user_by_email(session, email)
            return (await identity.issue_api_key(session, user.id, name, get_settings().secret_key))[1]

    out.print(f"API key (shown once): [bold]{_run(lambda s: _with_db(s, body))}[/]")


async def _resolve_user(session: Any, user: str) -> Any:
    """A user by id or email."""
    from backend.errors import NotFoundError
    from backend.repo import identity

    if "@" in user:
        found = await identity.find_user_by_email(session, user)
        if found is None:
            raise NotFoundError("user", user)
        return found
    return await identity.get_user(session, user)


@sessions_app.command("create")
def sessions_create(
    user: Annotated[str, typer.Option(help="User id or email.")],
    project: Annotated[str | None, typer.Option(help="Project id.")] = None,
    focus: Annotated[str | None, typer.Option(help="KIND:ID, e.g. task:<uuid> or project:<uuid>.")] = None,
    agent: Annotated[str | None, typer.Option(help="The active agent.")] = None,
    strategy: Annotated[str | None, typer.Option(help="Message-scoping strategy for this session.")] = None,
    title: Annotated[str | None, typer.Option(help="A title.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole session record.")] = False,
) -> None:
    """Open a chat session (optionally focused) and print its id."""
    from backend.errors import ValidationError
    from backend.memory.scoping import get_strategy
    from backend.repo import chat

    focus_kind, _, focus_id = (focus or "").partition(":")
    if focus and not focus_id:
        err.print("[bold red]error:[/] --focus must look like KIND:ID, e.g. task:<uuid>")
        raise typer.Exit(2)

    async def body(db: Any) -> Any:
        if strategy is not None:
            get_strategy(strategy)
        async with db.transaction() as session:
            owner = await _resolve_user(session, user)
            if focus and project is None:
                raise ValidationError("--focus needs --project")
            record = await chat.create_session(
                session,
                owner.id,
                project_id=project,
                focus_kind=focus_kind or None,
                focus_id=focus_id or None,
                title=title,
                active_agent=agent,
            )
            record.scoping_strategy = strategy
            await session.flush()
            return record

    record = _run(lambda s: _with_db(s, body))
    if not as_json:
        print(record.id)
        return
    fields = (
        "id",
        "user_id",
        "project_id",
        "title",
        "focus_kind",
        "focus_id",
        "active_agent",
        "scoping_strategy",
        "message_count",
        "created_at",
    )
    print(json.dumps({f: getattr(record, f) for f in fields}, default=str))


@sessions_app.command("say")
def sessions_say(
    session_id: Annotated[str, typer.Option("--session", help="Session id.")],
    text: Annotated[str, typer.Argument(help="The message.")],
    role: Annotated[str, typer.Option(help="user, assistant, system or tool.")] = "user",
    agent: Annotated[str | None, typer.Option(help="Agent attribution for assistant messages.")] = None,
) -> None:
    """Append a message to a session (handy for trying scoping strategies)."""
    from backend.db.models import ChatSession
    from backend.errors import NotFoundError
    from backend.repo import chat

    async def body(db: Any) -> int:
        async with db.transaction() as session:
            record = await session.get(ChatSession, _uuid_or_404(session_id))
            if record is None:
                raise NotFoundError("session", session_id)
            message = await chat.append_message(
                session, record.user_id, record.id, chat.NewMessage(role, text, agent_id=agent)
            )
            return message.seq

    out.print(f"message {_run(lambda s: _with_db(s, body))} appended")


def _uuid_or_404(value: str) -> Any:
    from backend.repo.scope import as_uuid

    return as_uuid(value, "session")


@context_app.command("show")
def context_show(
    session_id: Annotated[str, typer.Option("--session", help="Session id.")],
    agent: Annotated[
        str | None, typer.Option(help="Agent (default: the session's active agent, else coach).")
    ] = None,
    strategy: Annotated[str | None, typer.Option(help="Override the scoping strategy.")] = None,
    base_prompt: Annotated[
        str, typer.Option(help="The agent's base prompt.")
    ] = "You are a helpful assistant.",
    as_json: Annotated[bool, typer.Option("--json", help="Emit {system_prompt, messages, receipt}.")] = False,
) -> None:
    """Assemble the working context for a session's current turn and show it with its receipt."""
    from backend.db.models import ChatSession
    from backend.errors import NotFoundError
    from backend.memory.working_context import assemble_working_context

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            record = await session.get(ChatSession, _uuid_or_404(session_id))
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

    context = _run(lambda s: _with_db(s, body))
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
    user: Annotated[
        str | None, typer.Option(help="Act as this user (id or email); default: the project owner.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole response structure.")] = False,
) -> None:
    """Build token-budgeted context around seed entities."""
    from backend.graph.context_builder import build_context, resolve_request
    from backend.graph.templates import ExcludeSpec, IncludeSpec, load_template
    from backend.tokens import counter_for

    async def body(db: Any) -> Any:
        tpl = load_template(template) if template else None
        include = (tpl.include if tpl else IncludeSpec()).model_copy(
            update={"depth": depth} if depth is not None else {}
        )
        exclude = tpl.exclude if tpl else ExcludeSpec()
        changes = {
            k: v
            for k, v in {"states": exclude_state, "kinds": exclude_kind, "older_than": older_than}.items()
            if v
        }
        exclude = ExcludeSpec.model_validate({**exclude.model_dump(), **changes})
        request = resolve_request(
            seeds,
            budget=budget,
            strategy=strategy,
            include=include,
            exclude=exclude,
            format=fmt,
            template=template,
            query=query,
        )
        async with db.sessions() as session:
            user_id = await _acting_user(session, user, seeds[0])
            return await build_context(session, user_id, request, counter_for(get_settings().model))

    result = _run(lambda s: _with_db(s, body))
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
        templates = list_templates()
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
    table = Table(title=f"receipt · {r.total_tokens} tokens · budgets x{r.budget_scale:g}")
    for column in ("section", "tokens", "budget", "included", "excluded (why)"):
        table.add_column(column, justify="right" if column in ("tokens", "budget") else "left")
    for s in r.sections:
        why = "; ".join(f"{i.key}: {i.reason}" for i in s.excluded[:4])
        more = f" (+{len(s.excluded) - 4} more)" if len(s.excluded) > 4 else ""
        table.add_row(s.name, str(s.tokens), str(s.budget), str(len(s.included)), why + more)
    out.print(table)
    for note in r.notes:
        out.print(f"note: {note}")


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

    from backend.db.models import ApiKey
    from backend.repo import identity

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
    for k in _run(lambda s: _with_db(s, body)):
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
    from backend.repo import identity

    async def body(db: Any) -> int:
        async with db.transaction() as session:
            user = await identity.require_user_by_email(session, email)
            return await identity.revoke_api_keys(session, user.id, name)

    out.print(f"{_run(lambda s: _with_db(s, body))} key(s) revoked")


@app.command("linked")
def linked(
    entity_id: Annotated[str, typer.Argument(help="The entity's id.")],
    filter_kind: Annotated[
        str, typer.Option("--filter", help="Only this kind (task, plan, ...), or all.")
    ] = "all",
    user: Annotated[
        str | None, typer.Option(help="Act as this user (id or email); default: the project owner.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the structure as JSON.")] = False,
) -> None:
    """Print everything linked to an entity: what the `get_linked_entities` tool returns."""
    from dataclasses import asdict

    from backend.graph.linked import load_linked_entities_context
    from backend.graph.linked_format import format_full

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id = await _acting_user(session, user, entity_id)
            kind = await _entity_kind(session, user_id, entity_id)
            return await load_linked_entities_context(
                session,
                user_id,
                entity_id,
                kind,
                max_per_type=None,
                include_descriptions=True,
                filter_kind=None if filter_kind == "all" else filter_kind,
            )

    result = _run(lambda s: _with_db(s, body))
    if as_json:
        print(json.dumps({**asdict(result), "total": result.total}, default=str))
    else:
        out.print(format_full(result), markup=False, highlight=False)


async def _acting_user(session: Any, user: str | None, entity_id: str) -> Any:
    """The given user, or the owner of the entity's project (the CLI runs with database access)."""
    from sqlalchemy import select

    from backend.db.models import Entity, Project
    from backend.errors import NotFoundError
    from backend.repo.scope import as_uuid

    if user is not None:
        return (await _resolve_user(session, user)).id
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


async def _entity_kind(session: Any, user_id: Any, entity_id: str) -> str:
    from backend.repo.graph import get_entity

    kind: str = (await get_entity(session, user_id, entity_id)).kind
    return kind


ProjectOpt = Annotated[
    str | None, typer.Option("--project", help="Project id (default: the only one with a KB).")
]
UserOpt = Annotated[
    str | None, typer.Option(help="Act as this user (id or email); default: the project owner.")
]


async def _kb_scope(session: Any, project: str | None, user: str | None) -> tuple[Any, Any]:
    """(user id, project id) for KB commands: the given project, or the only one that has entries."""
    from sqlalchemy import select

    from backend.db.models import KbEntry, Project
    from backend.errors import NotFoundError, ValidationError
    from backend.repo.scope import as_uuid

    if project is None:
        rows = (await session.execute(select(KbEntry.project_id).distinct().limit(6))).scalars().all()
        if not rows:
            raise ValidationError("no project has a knowledge base yet (try `orrery demo load`)")
        if len(rows) > 1:
            raise ValidationError(f"several projects have a knowledge base; pass --project (e.g. {rows[0]})")
        project = str(rows[0])
    owner = (
        await session.execute(select(Project.owner_id).where(Project.id == as_uuid(project, "project")))
    ).scalar()
    if owner is None:
        raise NotFoundError("project", project)
    user_id = (await _resolve_user(session, user)).id if user else owner
    return user_id, as_uuid(project, "project")


@kb_app.command("search")
def kb_search(
    query: Annotated[str, typer.Argument(help="Words or entry codes.")],
    limit: Annotated[int, typer.Option(help="At most this many hits.")] = 10,
    project: ProjectOpt = None,
    user: UserOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the hits as JSON.")] = False,
) -> None:
    """Full-text search over the knowledge base (FTS5 / tsvector)."""
    from backend.knowledge.search import search_entries

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id, project_id = await _kb_scope(session, project, user)
            return await search_entries(session, user_id, project_id, query, limit=limit)

    found = _run(lambda s: _with_db(s, body))
    if as_json:
        hits = [
            {
                "code": h.code,
                "name": h.name,
                "collection": h.collection_slug,
                "rank": h.rank,
                "matched_terms": h.matched_terms,
            }
            for h in found.hits
        ]
        print(json.dumps({"terms": found.terms, "hits": hits}, default=str))
        return
    if not found.hits:
        out.print("no matching entries")
    for h in found.hits:
        out.print(f"[bold]{h.code}[/]  {h.name}  [dim]({h.collection_slug}, {h.matched_terms} terms)[/]")


@kb_app.command("load-context")
def kb_load_context(
    task: Annotated[str, typer.Argument(help="The task description.")],
    max_results: Annotated[int, typer.Option(help="At most this many entries.")] = 10,
    max_hops: Annotated[int, typer.Option(help="How far to follow relations.")] = 2,
    project: ProjectOpt = None,
    user: UserOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print load_context_for_task's result as JSON.")
    ] = False,
) -> None:
    """What load_context_for_task finds for a task: the Context Packet, or JSON."""
    from backend.knowledge.load_context import load_context_for_task
    from backend.knowledge.packet import format_context_packet

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id, project_id = await _kb_scope(session, project, user)
            return await load_context_for_task(
                session, user_id, project_id, task, max_results=max_results, max_hops=max_hops
            )

    result = _run(lambda s: _with_db(s, body))
    if as_json:
        print(json.dumps(result.as_dict()))
    else:
        out.print(format_context_packet(result), markup=False, highlight=False)


@kb_app.command("entry")
def kb_entry(
    code: Annotated[str, typer.Argument(help="The entry code, e.g. BR-012.")],
    project: ProjectOpt = None,
    user: UserOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the entry as JSON.")] = False,
) -> None:
    """Read one entry in full, with its relations."""
    from dataclasses import asdict

    from backend.knowledge.entries import get_entry

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id, project_id = await _kb_scope(session, project, user)
            return await get_entry(session, user_id, project_id, code)

    entry = _run(lambda s: _with_db(s, body))
    if as_json:
        print(json.dumps(asdict(entry), default=str))
        return
    out.print(f"[bold]{entry.code}[/] {entry.name}  [dim]({entry.collection_name})[/]")
    out.print(entry.description or "", markup=False, highlight=False)
    for r in entry.related:
        out.print(f"  {r.relation} ({r.direction}) {r.code} {r.name}", markup=False, highlight=False)


async def _project_scope(session: Any, project: str | None, user: str | None) -> tuple[Any, Any]:
    """(user id, project id): the given project, or the only project there is."""
    from sqlalchemy import select

    from backend.db.models import Project
    from backend.errors import ValidationError

    if project is None:
        rows = (await session.execute(select(Project.id).limit(2))).scalars().all()
        if len(rows) != 1:
            raise ValidationError("pass --project (the database has none or several projects)")
        project = str(rows[0])
    return await _kb_scope(session, project, user)


def _print_scoped_json(project: str | None, user: str | None, read: Any) -> None:
    """Run `read(session, user_id, project_id)` for the resolved project and print its JSON."""

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id, project_id = await _project_scope(session, project, user)
            return await read(session, user_id, project_id)

    print(json.dumps(_run(lambda s: _with_db(s, body)), indent=1, default=str))


@docs_app.command("index")
def docs_index(
    path: Annotated[
        str, typer.Argument(help="The docs folder (PRD markdown, OpenAPI, Prisma/SQL/Python/zod).")
    ],
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if nothing changed.")] = False,
    project: Annotated[str | None, typer.Option("--project", help="Project id.")] = None,
    user: UserOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Chunk a docs folder into the project's document index (replacing stale chunks)."""
    from backend.docs.index import index_docs

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            user_id, project_id = await _project_scope(session, project, user)
            return await index_docs(session, user_id, project_id, path, force=force)

    result = _run(lambda s: _with_db(s, body))
    if as_json:
        print(json.dumps({"success": True, **result.__dict__}))
        return
    if result.skipped_unchanged:
        out.print("docs unchanged since the last index (use --force to rebuild)")
    out.print(
        f"{result.chunks_created} chunks: {result.stories} stories in {len(result.epics_indexed)} epics, "
        f"{result.api_endpoints_mapped} endpoints, {result.db_models_mapped} models, "
        f"{result.schemas_mapped} schemas"
    )


@docs_app.command("story")
def docs_story(
    story_id: Annotated[str, typer.Argument(help="A story id such as US-001.")],
    project: Annotated[str | None, typer.Option("--project", help="Project id.")] = None,
    user: UserOpt = None,
) -> None:
    """Print get_context_for_story's result (JSON)."""
    from backend.docs.index import get_context_for_story

    _print_scoped_json(project, user, lambda s, u, p: get_context_for_story(s, u, p, story_id))


@docs_app.command("search")
def docs_search(
    keywords: Annotated[list[str], typer.Argument(help="Keywords.")],
    scope: Annotated[str, typer.Option(help="stories, specs or all.")] = "all",
    limit: Annotated[int, typer.Option(help="At most this many.")] = 5,
    project: Annotated[str | None, typer.Option("--project", help="Project id.")] = None,
    user: UserOpt = None,
) -> None:
    """Print search_context's result (JSON)."""
    from backend.docs.index import search_context

    if scope not in ("stories", "specs", "all"):
        err.print("[bold red]error:[/] --scope must be stories, specs or all")
        raise typer.Exit(2)
    chosen = cast(Literal["stories", "specs", "all"], scope)
    _print_scoped_json(
        project, user, lambda s, u, p: search_context(s, u, p, keywords, scope=chosen, limit=limit)
    )


@docs_app.command("summary")
def docs_summary(
    project: Annotated[str | None, typer.Option("--project", help="Project id.")] = None,
    user: UserOpt = None,
) -> None:
    """Print get_context_summary's result (JSON)."""
    from backend.docs.index import get_context_summary

    _print_scoped_json(project, user, get_context_summary)


@app.command("chat")
def chat_command(
    once: Annotated[
        str | None, typer.Option("--once", help="Run one turn with this message and exit.")
    ] = None,
    session: Annotated[str | None, typer.Option(help="Continue this session.")] = None,
    user: Annotated[str | None, typer.Option(help="User id or email (default: the demo user).")] = None,
    project: Annotated[
        str | None, typer.Option(help="Project id (default: the user's first project).")
    ] = None,
    focus: Annotated[str | None, typer.Option(help="KIND:ID, e.g. task:<uuid>.")] = None,
    agent: Annotated[str | None, typer.Option(help="Start with this agent.")] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Chat as the demo user, focused on the demo task.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --once: print the turn as JSON.")] = False,
) -> None:
    """Chat with the assistant in the terminal; `--once` runs a single turn for scripts."""
    from backend.chat_cli import interactive, resolve_target, run_once

    async def body(db: Any) -> Any:
        target = await resolve_target(
            db, session=session, user=user, project=project, focus=focus, agent=agent, demo=demo
        )
        if once is None:
            await interactive(db, get_settings(), target, out)
            return None
        return await run_once(db, get_settings(), target, once, agent)

    result = _run(lambda s: _with_db(s, body))
    if result is None:
        return
    if as_json:
        print(json.dumps(result, default=str))
    else:
        out.print(result["reply"], markup=False, highlight=False)


@app.command("mcp")
def mcp_command(
    project: Annotated[
        str | None, typer.Option("--project", help="Project id (default: the user's first).")
    ] = None,
) -> None:
    """Serve the tools over MCP on stdio, as the user of ORRERY_API_KEY."""
    import os

    from backend.mcp_server import run_stdio

    settings = get_settings()
    try:
        asyncio.run(_with_db(settings, lambda _db: asyncio.sleep(0)))  # refuse an un-migrated database early
        run_stdio(settings, os.environ.get("ORRERY_API_KEY"), project or os.environ.get("ORRERY_PROJECT_ID"))
    except OrreryError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
