"""The tool registry over MCP (the official `mcp` SDK): the same functions the agents call.

`orrery mcp` serves stdio for Claude Desktop, Cursor and other MCP clients. The calling user is the
owner of `ORRERY_API_KEY`; the project is `ORRERY_PROJECT_ID` or the user's first project. Tool
failures the model can fix come back as MCP tool errors with the same readable message.
"""

from __future__ import annotations

import functools
import inspect
import typing
from types import SimpleNamespace
from typing import Any

from pydantic_ai import ModelRetry

from backend.config import Settings
from backend.db.engine import Database
from backend.deps import TurnDeps
from backend.errors import AuthenticationError, ValidationError
from tools.registry import REGISTRY, ToolSpec

MCP_TOOLS = (
    "load_context_for_task",
    "get_linked_entities",
    "build_context",
    "get_entry",
    "search_knowledge",
    "update_entry",
    "get_context_for_story",
    "get_relevant_specs",
    "search_context",
    "list_stories_by_epic",
    "get_context_summary",
    "index_docs",
)


def _without_ctx(spec: ToolSpec, deps: TurnDeps) -> Any:
    """The tool as a plain async function of its own parameters, bound to `deps`."""
    from mcp.server.mcpserver.exceptions import ToolError

    fn = spec.function
    hints = typing.get_type_hints(fn)
    params = [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in list(inspect.signature(fn).parameters.values())[1:]
    ]

    @functools.wraps(fn)
    async def call(**kwargs: Any) -> Any:
        try:
            return await fn(SimpleNamespace(deps=deps), **kwargs)
        except ModelRetry as exc:
            raise ToolError(str(exc)) from None

    call.__signature__ = inspect.Signature(params, return_annotation=hints.get("return", Any))  # type: ignore[attr-defined]
    call.__annotations__ = {k: v for k, v in hints.items() if k != "ctx"}
    del call.__wrapped__  # expose the new signature, not the original
    return call


async def resolve_deps(
    db: Database, settings: Settings, api_key: str | None, project: str | None
) -> TurnDeps:
    """Who is calling (from the API key) and in which project."""
    from backend.repo import identity
    from backend.repo.scope import require_project

    if not api_key:
        raise AuthenticationError("set ORRERY_API_KEY to an Orrery API key (e.g. from `orrery demo load`)")
    async with db.transaction() as s:
        user = await identity.authenticate(s, api_key, settings.secret_key)
        if project:
            project_id = (await require_project(s, user.id, project)).id
        else:
            projects = await identity.list_projects(s, user.id)
            if not projects:
                raise ValidationError("this user has no project; pass ORRERY_PROJECT_ID")
            project_id = projects[-1].id
    return TurnDeps(db=db, user_id=user.id, settings=settings, project_id=project_id)


def build_server(deps: TurnDeps) -> Any:
    """An MCP server exposing the registry's tools for one user and project."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        "orrery", instructions="Orrery's context tools: graph, knowledge base, document index."
    )
    for name in MCP_TOOLS:
        spec = REGISTRY[name]
        server.add_tool(_without_ctx(spec, deps), name=name, description=inspect.getdoc(spec.function))
    return server


def run_stdio(settings: Settings, api_key: str | None, project: str | None) -> None:
    """Serve over stdio until the client disconnects."""
    import anyio

    async def main() -> None:
        db = Database.from_settings(settings)
        try:
            deps = await resolve_deps(db, settings, api_key, project)
            await build_server(deps).run_stdio_async()
        finally:
            await db.dispose()

    anyio.run(main)
