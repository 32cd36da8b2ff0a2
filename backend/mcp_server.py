"""The tool registry over MCP (the official `mcp` SDK): the same functions the agents call.

`orrery mcp` serves stdio for Claude Desktop, Cursor and other MCP clients; the calling user is the
owner of `ORRERY_API_KEY`. `orrery mcp --http` serves streamable HTTP at `/mcp`, where every request
acts for the user of its `Authorization: Bearer <api key>`. The project is `--project` /
`ORRERY_PROJECT_ID`, or the user's first project. Tool
failures the model can fix come back as MCP tool errors with the same readable message.
"""

from __future__ import annotations

import functools
import inspect
import typing
import uuid
from collections.abc import Awaitable, Callable
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


Resolver = Callable[[], Awaitable[TurnDeps]]


def _without_ctx(spec: ToolSpec, resolve: Resolver) -> Any:
    """The tool as a plain async function of its own parameters; `resolve` says who is calling."""
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
            return await fn(SimpleNamespace(deps=await resolve()), **kwargs)
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


def build_server(resolve: Resolver, **server_options: Any) -> Any:
    """An MCP server exposing the registry's tools; `resolve` gives the caller's `TurnDeps`."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        "orrery",
        instructions="Orrery's context tools: graph, knowledge base, document index.",
        **server_options,
    )
    for name in MCP_TOOLS:
        spec = REGISTRY[name]
        server.add_tool(_without_ctx(spec, resolve), name=name, description=inspect.getdoc(spec.function))
    return server


class ApiKeyVerifier:
    """MCP bearer tokens are Orrery API keys; the access token carries the user id."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db, self.settings = db, settings

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        from backend.repo import identity

        try:
            async with self.db.transaction() as s:
                user = await identity.authenticate(s, token, self.settings.secret_key)
        except AuthenticationError:
            return None
        return AccessToken(token=token, client_id=str(user.id), scopes=["orrery"])


def http_app(db: Database, settings: Settings, base_url: str, project: str | None = None) -> Any:
    """The streamable-HTTP MCP app (at `/mcp`): each request acts for its bearer token's user."""
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.settings import AuthSettings

    async def resolve() -> TurnDeps:
        from backend.repo import identity
        from backend.repo.scope import require_project

        token = get_access_token()
        if token is None:
            raise AuthenticationError("missing bearer token")
        user_id = uuid.UUID(token.client_id)
        project_id: uuid.UUID | None
        async with db.sessions() as s:
            if project:
                project_id = (await require_project(s, user_id, project)).id
            else:
                projects = await identity.list_projects(s, user_id)
                project_id = projects[-1].id if projects else None
        return TurnDeps(db=db, user_id=user_id, settings=settings, project_id=project_id)

    # API keys are not audience-bound tokens: the verifier itself decides, per key
    auth = AuthSettings(
        issuer_url=base_url, resource_server_url=f"{base_url}/mcp", validate_token_resource=False
    )
    server = build_server(resolve, token_verifier=ApiKeyVerifier(db, settings), auth=auth)
    return server.streamable_http_app()


def run_http(settings: Settings, host: str, port: int, project: str | None) -> None:
    """Serve streamable HTTP until stopped."""
    import uvicorn

    db = Database.from_settings(settings)
    app = http_app(db, settings, f"http://{host}:{port}", project)
    uvicorn.run(app, host=host, port=port, log_level=settings.log_level)


def run_stdio(settings: Settings, api_key: str | None, project: str | None) -> None:
    """Serve over stdio until the client disconnects."""
    import anyio

    async def main() -> None:
        db = Database.from_settings(settings)
        try:
            deps = await resolve_deps(db, settings, api_key, project)

            async def fixed() -> TurnDeps:
                return deps

            await build_server(fixed).run_stdio_async()
        finally:
            await db.dispose()

    anyio.run(main)
