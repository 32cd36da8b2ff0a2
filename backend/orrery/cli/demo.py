"""`orrery demo`: the demo workspace and the synthetic workspace generator."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer
from rich.table import Table

from orrery.cli.common import (
    out,
    run,
    with_db,
)
from orrery.config import get_settings

demo_app = typer.Typer(help="Demo and synthetic workspaces.", no_args_is_help=True)


@demo_app.command("load")
def demo_load(
    as_json: Annotated[bool, typer.Option("--json", help="Print ids and the API key as JSON.")] = False,
    if_empty: Annotated[
        bool, typer.Option("--if-empty", help="Do nothing unless the database has no users.")
    ] = False,
) -> None:
    """Create the demo workspace (idempotent; rotates the demo API key)."""
    from orrery.demo.workspace import load_demo
    from orrery.repo.identity import count_users

    async def body(db: Any) -> Any:
        if if_empty:
            async with db.sessions() as session:
                if await count_users(session) > 0:
                    return None
        return await load_demo(db, get_settings().secret_key)

    demo = run(lambda s: with_db(s, body))
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
    from orrery.demo.synth import synthesize

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
    result = run(lambda s: with_db(s, body))
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
    from orrery.repo import identity
    from orrery.repo.summary import project_summary

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user = await identity.require_user_by_email(session, email)
            projects = await identity.list_projects(session, user.id)
            return user, [await project_summary(session, user.id, p.id) for p in projects]

    user, summaries = run(lambda s: with_db(s, body))
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
