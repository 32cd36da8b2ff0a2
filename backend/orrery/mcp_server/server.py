"""The MCP server itself (the SDK's `MCPServer` over the tool registry), for stdio and streamable HTTP.

Imported on first use (`orrery.mcp_server` re-exports it lazily): `orrery mcp` answers `initialize`
before this module and the SDK are loaded (see `orrery.mcp_server.stdio`).
"""

from __future__ import annotations

import asyncio
import typing
import uuid
from typing import IO, Any, cast

from orrery import __version__
from orrery.config import Settings
from orrery.errors import AuthenticationError, OrreryError, ValidationError
from orrery.mcp_server.handshake import INSTRUCTIONS
from orrery.services.tool_calls import Resolver, mcp_tool

if typing.TYPE_CHECKING:  # imported where used: the stdio server answers `initialize` before them
    from orrery.db.engine import Database
    from orrery.deps import TurnDeps
    from orrery.mcp_server.handshake import Incoming, Outgoing


async def resolve_deps(
    db: Database, settings: Settings, api_key: str | None, project: str | None
) -> TurnDeps:
    """Who is calling (from the API key) and in which project, on a migrated database."""
    from orrery.db.migrations import ensure_current
    from orrery.deps import TurnDeps
    from orrery.repo import identity
    from orrery.repo.scope import require_project

    if not api_key:
        raise AuthenticationError("set ORRERY_API_KEY to an Orrery API key (e.g. from `orrery demo load`)")
    await ensure_current(db.engine)
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


def registry_tools(resolve: Resolver, settings: Settings) -> list[Any]:
    """Every registry tool (plugins' too) as an MCP tool."""
    from orrery.plugins import ensure_plugins
    from orrery.tools.registry import REGISTRY, tool_names

    ensure_plugins(settings)
    return [mcp_tool(REGISTRY[name], resolve) for name in tool_names()]


def build_server(resolve: Resolver, settings: Settings, **server_options: Any) -> Any:
    """An MCP server exposing every registry tool, the caller's knowledge entries and story context
    as resources and the agents as prompts; `resolve` gives the caller's `TurnDeps`."""
    from orrery.mcp_server.catalog import catalog_server

    return catalog_server(
        resolve,
        instructions=INSTRUCTIONS,
        tools=registry_tools(resolve, settings),
        log_level=_log_level(settings),
        **server_options,
    )


def _log_level(settings: Settings) -> Any:
    """The SDK logs at INFO to stderr by default; Orrery's level, but never chattier than warnings
    unless debugging."""
    return "DEBUG" if settings.log_level == "debug" else max(settings.log_level.upper(), "WARNING", key=_rank)


def _rank(level: str) -> int:
    return ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"].index(level)


def build_stdio_server(resolve: Resolver, settings: Settings) -> Any:
    """A server that answers `initialize` at once: the tools (pydantic-ai, the registry, plugins)
    are built in a worker thread started right away, and `tools/list` / `tools/call` wait for it."""
    from mcp.server.mcpserver import MCPServer

    class ToolsWhenReady(MCPServer):
        def __init__(self) -> None:
            super().__init__(
                "orrery", version=__version__, instructions=INSTRUCTIONS, log_level=_log_level(settings)
            )
            self._tools = asyncio.ensure_future(asyncio.to_thread(build_server, resolve, settings))

        async def _ready(self) -> Any:
            return await asyncio.shield(self._tools)

        async def list_tools(self) -> Any:
            return await (await self._ready()).list_tools()

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            return await (await self._ready()).call_tool(name, arguments, context)

        async def list_resources(self) -> Any:
            return await (await self._ready()).list_resources()

        async def list_resource_templates(self) -> Any:
            return await (await self._ready()).list_resource_templates()

        async def read_resource(self, uri: Any, context: Any = None) -> Any:
            return await (await self._ready()).read_resource(uri, context)

        async def list_prompts(self) -> Any:
            return await (await self._ready()).list_prompts()

        async def get_prompt(self, name: str, arguments: Any = None, context: Any = None) -> Any:
            return await (await self._ready()).get_prompt(name, arguments, context)

        async def serve(self, stdin: Incoming, stdout: Outgoing) -> None:
            """`run_stdio_async` on the given streams (`orrery.mcp_server.stdio` owns the fds); anyio
            wraps them for their `readline` and `write`/`flush`."""
            import anyio
            from mcp.server.stdio import stdio_server

            wire = anyio.wrap_file(cast(IO[str], stdin)), anyio.wrap_file(cast(IO[str], stdout))
            async with stdio_server(*wire) as (read, write):
                server = self._lowlevel_server
                await server.run(read, write, server.create_initialization_options())

    return ToolsWhenReady()


class ApiKeyVerifier:
    """MCP bearer tokens are Orrery API keys; the access token carries the user id."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db, self.settings = db, settings

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        from orrery.repo import identity

        try:
            async with self.db.transaction() as s:
                user = await identity.authenticate(s, token, self.settings.secret_key)
        except AuthenticationError:
            return None
        return AccessToken(token=token, client_id=str(user.id), scopes=["orrery"])


def http_app(db: Database, settings: Settings, base_url: str, project: str | None = None) -> Any:
    """The streamable-HTTP MCP app (at `/mcp`): each request acts for its bearer token's user; CORS
    and the wrong-key refusal in front (`http_front`)."""
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.settings import AuthSettings

    async def resolve() -> TurnDeps:
        from orrery.deps import TurnDeps
        from orrery.repo import identity
        from orrery.repo.scope import require_project

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

    # A plain bearer check: no resource server URL, so no OAuth metadata route and a 401 whose
    # WWW-Authenticate names no authorization server (there is none to send clients to)
    auth = AuthSettings(issuer_url=base_url, resource_server_url=None, validate_token_resource=False)
    server = build_server(resolve, settings, token_verifier=ApiKeyVerifier(db, settings), auth=auth)
    from orrery.mcp_server.http_front import fronted

    return fronted(server.streamable_http_app(), settings)


def run_http(settings: Settings, host: str, port: int, project: str | None) -> None:
    """Serve streamable HTTP until stopped."""
    import uvicorn

    from orrery.db.engine import Database

    db = Database.from_settings(settings)
    app = http_app(db, settings, f"http://{host}:{port}", project)
    uvicorn.run(app, host=host, port=port, log_level=settings.log_level)


def preload() -> None:
    """What the stdio server needs before it serves (the SDK's server stack, the settings): imported
    in a thread while `orrery.mcp_server.stdio` answers `initialize`."""
    import anyio  # noqa: F401
    import mcp.server.mcpserver
    import mcp.server.stdio  # noqa: F401

    from orrery.config import get_settings

    get_settings()


def run_stdio(api_key: str | None, project: str | None, stdin: Incoming, stdout: Outgoing) -> None:
    """Serve MCP on `stdin`/`stdout` (the client's wire) until the client leaves.

    The API key is checked in the background while the server answers; the first tool call waits
    for it (a bad key comes back as that call's tool error).
    """
    import anyio

    from orrery.config import get_settings

    settings = get_settings()

    async def main() -> None:
        opened: list[Database] = []

        async def check() -> TurnDeps:
            await asyncio.to_thread(_import_checks)  # sqlalchemy, alembic, the repo: off the loop
            from orrery.db.engine import Database

            opened.append(Database.from_settings(settings))
            return await resolve_deps(opened[0], settings, api_key, project)

        caller = asyncio.ensure_future(check())

        async def who() -> TurnDeps:
            try:
                return await asyncio.shield(caller)
            except OrreryError as exc:
                from mcp.server.mcpserver.exceptions import ToolError

                raise ToolError(str(exc)) from None

        try:
            await build_stdio_server(who, settings).serve(stdin, stdout)
        finally:
            caller.cancel()
            for db in opened:
                await db.dispose()

    anyio.run(main)


def _import_checks() -> None:
    import orrery.db.engine
    import orrery.db.migrations
    import orrery.deps
    import orrery.repo.identity
    import orrery.repo.scope  # noqa: F401
