"""What an MCP client can browse besides the tools: the caller's knowledge entries, story context and
remembered facts (`orrery://me/facts`) as resources, and the agents as prompts.

Resources read through the same tool functions the agents call (`get_entry`, `get_context_for_story`),
so they are scoped to the calling user and project and quote stored text the same way. The list of
entries is read per request (a client sees the knowledge base as it is now); stories are reached by
the `orrery://stories/{story_id}` template (`list_stories_by_epic` lists them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from orrery.errors import OrreryError

if TYPE_CHECKING:
    from orrery.deps import TurnDeps

Resolver = Callable[[], Awaitable["TurnDeps"]]
ENTRY_URI = "orrery://kb/{code}"
STORY_URI = "orrery://stories/{story_id}"
FACTS_URI = "orrery://me/facts"
LISTED_ENTRIES = 200
"""Most entries `resources/list` names (the template reads any of them)."""


def add_catalog(server: Any, resolve: Resolver) -> None:
    """Register the resource templates and one prompt per agent on `server` (after plugins)."""
    from orrery.tools.docs import get_context_for_story
    from orrery.tools.knowledge import get_entry

    async def entry(code: str) -> str:
        return await _read(get_entry, resolve, code)

    async def story(story_id: str) -> str:
        return await _read(get_context_for_story, resolve, story_id)

    server.resource(
        ENTRY_URI,
        name="knowledge-entry",
        description="A knowledge-base entry in full: description, code paths, corrections, relations.",
        mime_type="text/markdown",
    )(entry)
    server.resource(
        STORY_URI,
        name="story-context",
        description="A user story with its acceptance criteria and the specs it needs, quoted verbatim.",
        mime_type="text/markdown",
    )(story)
    _add_facts(server, resolve)
    for prompt in agent_prompts():
        server.add_prompt(prompt)


def _add_facts(server: Any, resolve: Resolver) -> None:
    """`orrery://me/facts`: the caller's current remembered facts (MCP has no chats, so no source)."""
    from orrery.tools.facts import list_remembered_facts

    async def facts() -> str:
        return await list_remembered_facts(SimpleNamespace(deps=await resolve()))  # type: ignore[arg-type]

    server.resource(
        FACTS_URI,
        name="remembered-facts",
        description="What Orrery remembers about you: your current facts, with ids, dates and subjects.",
        mime_type="text/markdown",
    )(facts)


async def _read(tool: Any, resolve: Resolver, key: str) -> str:
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS
    from pydantic_ai import ModelRetry

    deps = await caller(resolve)
    try:
        return str(await tool(SimpleNamespace(deps=deps), key))
    except ModelRetry as exc:  # the tool's readable refusal (not found, bad id): the SDK's not-found code
        raise MCPError(INVALID_PARAMS, str(exc)) from None


async def caller(resolve: Resolver) -> Any:
    """The caller's deps; a bad key or a project that is not theirs is the request's clean error
    (`invalid request` with Orrery's message), not an internal error with a traceback."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_REQUEST

    try:
        return await resolve()
    except (ToolError, OrreryError) as exc:
        raise MCPError(INVALID_REQUEST, str(exc)) from None


async def listed_entries(resolve: Resolver) -> list[Any]:
    """The caller's project's entries as MCP resources (code order, at most `LISTED_ENTRIES`)."""
    from mcp.types import Resource
    from sqlalchemy import select

    from orrery.db.models import KbEntry
    from orrery.text import inline_data

    deps = await caller(resolve)
    async with deps.db.sessions() as session:
        rows = await session.execute(
            select(KbEntry.code, KbEntry.name, KbEntry.description)
            .where(KbEntry.project_id == deps.project_id)
            .order_by(KbEntry.code)
            .limit(LISTED_ENTRIES)
        )
        return [
            Resource(
                uri=ENTRY_URI.format(code=code),
                name=code,
                title=inline_data(f"{code}: {name}"),
                description=inline_data(description or "")[:200] or None,
                mime_type="text/markdown",
            )
            for code, name, description in rows.all()
        ]


def agent_prompts() -> list[Any]:
    """One prompt per agent (plugins' too, once registered): its base prompt, then the request."""
    from mcp.server.mcpserver.prompts.base import Prompt

    from orrery.roster import AGENTS

    def make(agent: Any) -> Any:
        def render(request: str) -> str:
            return f"{agent.prompt()}\n\n---\n\nRequest: {request}"

        return Prompt.from_function(render, name=agent.id, title=agent.title, description=agent.description)

    return [make(agent) for agent in AGENTS.values()]


def catalog_server(resolve: Resolver, **options: Any) -> Any:
    """An `MCPServer` whose `resources/list` also names the caller's entries, read per request."""
    from mcp.server.mcpserver import MCPServer

    from orrery import __version__

    class CatalogServer(MCPServer):
        async def list_resources(self) -> Any:
            return [*await super().list_resources(), *await listed_entries(resolve)]

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            from orrery.tools.registry import resolve_alias

            name, arguments = resolve_alias(name, arguments)  # seed 004's chunk_docs, not listed
            return await super().call_tool(name, arguments, context)

    server = CatalogServer("orrery", version=__version__, **options)
    add_catalog(server, resolve)
    return server
