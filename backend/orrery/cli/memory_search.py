"""`orrery memory search`: search a person's earlier chats, as the `search_memory` tool does for the
model (the same scoping, ranking, budget and receipt; `orrery.memory.search`)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from orrery.cli.common import out, resolve_user, run, with_db
from orrery.cli.memory import memory_app


async def _project(session: Any, user_id: Any, project: str | None) -> Any:
    """The given project (the person's own), else their first, as the tools door and MCP choose."""
    from orrery.repo import identity
    from orrery.repo.scope import require_project

    if project is not None:
        return (await require_project(session, user_id, project)).id
    projects = await identity.list_projects(session, user_id)
    return projects[-1].id if projects else None


@memory_app.command("search")
def memory_search(
    query: Annotated[str, typer.Argument(help="What to look for in the person's earlier chats.")],
    user: Annotated[str, typer.Option(help="User id or email.")],
    since: Annotated[str | None, typer.Option(help="Only messages from this date on (YYYY-MM-DD).")] = None,
    until: Annotated[str | None, typer.Option(help="Only messages up to this date (YYYY-MM-DD).")] = None,
    chat: Annotated[str | None, typer.Option("--chat", help="Only this chat of the person's (id).")] = None,
    project: Annotated[
        str | None, typer.Option("--project", help="Project id (default: the person's first).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result and receipt as JSON.")] = False,
) -> None:
    """Search USER's earlier chats for QUERY: dated excerpts under each chat's title, best first,
    within `ORRERY_BUDGET_SEARCH_MEMORY` tokens."""
    from orrery.memory.search import SearchRequest, search_memory

    async def start(settings: Any) -> Any:
        async def body(db: Any) -> Any:
            async with db.readers() as session:
                user_id = (await resolve_user(session, user)).id
                project_id = await _project(session, user_id, project)
                request = SearchRequest(user_id, query, project_id, since=since, until=until, chat_id=chat)
                return await search_memory(session, request, settings)

        return await with_db(settings, body)

    found = run(start)
    if as_json:
        print(json.dumps(found.as_dict(), indent=1))
        return
    out.print(found.text, markup=False, highlight=False)
    if found.included:
        out.print("\nreceipt:", markup=False, highlight=False)
    for item in found.included:
        where = f'"{getattr(item, "chat_title", "")}" {getattr(item, "date", "")} ({item.key})'
        out.print(f"- {where}: {item.reason}", markup=False, highlight=False)
