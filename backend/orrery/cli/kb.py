"""`orrery kb`: search the knowledge base, load context for a task, read and create entries."""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

import typer

from orrery.cli.common import (
    ProjectOpt,
    UserOpt,
    kb_scope,
    out,
    run,
    with_db,
)

kb_app = typer.Typer(
    help="Knowledge base: search, load context for a task, read and create entries.", no_args_is_help=True
)


@kb_app.command("search")
def kb_search(
    query: Annotated[str, typer.Argument(help="Words or entry codes.")],
    limit: Annotated[int, typer.Option(help="At most this many hits.")] = 10,
    project: ProjectOpt = None,
    user: UserOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the hits as JSON.")] = False,
) -> None:
    """Full-text search over the knowledge base (FTS5 / tsvector)."""
    from orrery.knowledge.search import search_entries

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id, project_id = await kb_scope(session, project, user)
            return await search_entries(session, user_id, project_id, query, limit=limit)

    found = run(lambda s: with_db(s, body))
    if as_json:
        hits = [
            {
                "code": h.code,
                "name": h.name,
                "collection": h.collection_slug,
                "rank": h.rank if math.isfinite(h.rank) else None,  # an exact code match ranks above all
                "exact_code": h.exact_code,
                "matched_terms": h.matched_terms,
            }
            for h in found.hits
        ]
        print(json.dumps({"terms": found.terms, "hits": hits}, default=str, allow_nan=False))
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
    from orrery.knowledge.load_context import load_context_for_task
    from orrery.knowledge.packet import format_context_packet

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id, project_id = await kb_scope(session, project, user)
            return await load_context_for_task(
                session, user_id, project_id, task, max_results=max_results, max_hops=max_hops
            )

    result = run(lambda s: with_db(s, body))
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

    from orrery.knowledge.entries import get_entry

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id, project_id = await kb_scope(session, project, user)
            return await get_entry(session, user_id, project_id, code)

    entry = run(lambda s: with_db(s, body))
    if as_json:
        print(json.dumps(asdict(entry), default=str))
        return
    out.print(f"[bold]{entry.code}[/] {entry.name}  [dim]({entry.collection_name})[/]")
    out.print(entry.description or "", markup=False, highlight=False)
    for r in entry.related:
        out.print(f"  {r.relation} ({r.direction}) {r.code} {r.name}", markup=False, highlight=False)


@kb_app.command("create-entry")
def kb_create_entry(
    collection: Annotated[str, typer.Argument(help="A collection's slug, e.g. business-rules or glossary.")],
    name: Annotated[str, typer.Argument(help="A short name for the entry.")],
    description: Annotated[str, typer.Argument(help="What the entry says.")],
    code: Annotated[str | None, typer.Option(help="The entry code (default: the next free one).")] = None,
    code_path: Annotated[
        list[str] | None, typer.Option("--code-path", help="A file implementing it (repeatable).")
    ] = None,
    link: Annotated[
        list[str] | None, typer.Option("--link", help="An entry code it relates to (repeatable).")
    ] = None,
    project: ProjectOpt = None,
    user: UserOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the new entry as JSON.")] = False,
) -> None:
    """Capture a knowledge entry (the create_entry tool's door), recorded with you as its source."""
    from dataclasses import asdict

    from orrery.knowledge.capture import create_entry

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            user_id, project_id = await kb_scope(session, project, user)
            return await create_entry(
                session,
                user_id,
                project_id,
                collection=collection,
                name=name,
                description=description,
                code=code,
                code_paths=code_path,
                links=link,
            )

    entry = run(lambda s: with_db(s, body))
    if as_json:
        print(json.dumps(asdict(entry), default=str))
        return
    out.print(f"created [bold]{entry.code}[/] ", end="")
    out.print(f"{entry.name} ({entry.collection_name})", markup=False, highlight=False)
