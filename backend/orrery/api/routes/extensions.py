"""What the roster holds, plugins included: agents, scoping strategies and tools, and a tool door.

`POST /v1/tools/{name}` runs any registry tool (built-in or contributed) for the caller, with the
same argument checks as MCP (unknown arguments refused) and the same readable errors (422).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import uuid
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from orrery.api.errors import ERROR_RESPONSES
from orrery.deps import TurnDeps
from orrery.errors import NotFoundError, ValidationError
from orrery.services.deps import CurrentUser
from orrery.validation import StorableBody

router = APIRouter(prefix="/v1", tags=["extensions"], responses=ERROR_RESPONSES)


class AgentOut(BaseModel):
    """One agent: who it is, how the router picks it, what it may call, where it came from."""

    id: str
    title: str
    description: str
    route_words: list[str]
    strategy: str
    tools: list[str]
    model: str = Field(description="The OpenAI-compatible model id that talks to this agent.")
    plugin: str | None = Field(description="The contributing plugin; null for built-ins.")


class StrategyOut(BaseModel):
    """One message-scoping strategy, choosable by name on a session or per agent."""

    name: str
    description: str
    plugin: str | None


class ToolOut(BaseModel):
    """One tool of the registry, as the agents and MCP clients see it."""

    name: str
    description: str
    read_only: bool
    parameters: dict[str, Any] = Field(description="JSON schema of the arguments (all described).")
    plugin: str | None


class ToolCall(StorableBody):
    """Arguments for one tool call; the project defaults to the caller's first."""

    arguments: dict[str, Any] = Field(default_factory=dict)
    project_id: uuid.UUID | None = None


class ToolResult(BaseModel):
    """What the tool returned, as the model would read it."""

    tool: str
    result: str
    structured: dict[str, Any] | None = Field(
        default=None, description="What the tool gives besides its text (search_memory: its receipt)."
    )


def _plugins(request: Request) -> None:
    from orrery.plugins import ensure_plugins

    ensure_plugins(request.app.state.settings)


@router.get("/agents", response_model=list[AgentOut], summary="Agents, built-in and contributed")
async def agents(request: Request, user: CurrentUser) -> list[AgentOut]:
    """Every agent, with its routing words, strategy, tools and OpenAI-compatible model id."""
    from orrery.roster import AGENTS

    _plugins(request)
    return [
        AgentOut(
            id=a.id,
            title=a.title,
            description=a.description,
            route_words=list(a.route_words),
            strategy=a.strategy,
            tools=list(a.tools),
            model=f"orrery/{a.id}",
            plugin=a.plugin,
        )
        for a in AGENTS.values()
    ]


@router.get("/strategies", response_model=list[StrategyOut], summary="Message-scoping strategies")
async def strategies(request: Request, user: CurrentUser) -> list[StrategyOut]:
    """Every scoping strategy by name, with the plugin that contributed it (null: built in)."""
    from orrery.memory.scoping import get_strategy, strategy_names
    from orrery.plugins import ensure_plugins

    _plugins(request)
    owners = {c.name: c.plugin for c in ensure_plugins() if c.kind == "strategy"}
    return [
        StrategyOut(
            name=name,
            description=(inspect.getdoc(type(get_strategy(name))) or "").splitlines()[0],
            plugin=owners.get(name),
        )
        for name in strategy_names()
    ]


@router.get("/tools", response_model=list[ToolOut], summary="Tools of the registry")
async def tools(request: Request, user: CurrentUser) -> list[ToolOut]:
    """Every registry tool with its described parameters (what agents and MCP clients get)."""
    from orrery.tools.registry import REGISTRY, agent_tools, tool_names

    _plugins(request)
    out = []
    for name, tool in zip(tool_names(), agent_tools(tool_names()), strict=True):
        definition = tool.tool_def
        out.append(
            ToolOut(
                name=name,
                description=definition.description or "",
                read_only=REGISTRY[name].read_only,
                parameters=definition.parameters_json_schema,
                plugin=REGISTRY[name].plugin,
            )
        )
    return out


@router.post("/tools/{name}", response_model=ToolResult, summary="Run one tool as the caller")
async def call_tool(name: str, body: ToolCall, request: Request, user: CurrentUser) -> ToolResult:
    """Run a registry tool for the caller (404 unknown tool; 422 bad arguments or a tool error).

    The route holds no transaction while the tool runs: each tool opens its own (as through MCP, the
    CLI or an agent), so a writing tool never waits for a write lock its own request holds."""
    await asyncio.to_thread(importlib.import_module, "mcp.server.mcpserver")  # its first import is heavy
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    from orrery.repo import identity
    from orrery.repo.scope import require_project
    from orrery.services.tool_calls import door_text, mcp_tool
    from orrery.tools.registry import REGISTRY, resolve_alias

    _plugins(request)
    name, arguments = resolve_alias(name, body.arguments)  # seed 004's chunk_docs is index_docs
    if name not in REGISTRY:
        raise NotFoundError("tool", name)
    async with request.app.state.db.readers() as session:  # closed before the tool runs
        if body.project_id is not None:
            project_id: uuid.UUID | None = (await require_project(session, user.id, body.project_id)).id
        else:
            projects = await identity.list_projects(session, user.id)
            project_id = projects[-1].id if projects else None
    deps = TurnDeps(
        db=request.app.state.db, user_id=user.id, settings=request.app.state.settings, project_id=project_id
    )

    async def caller() -> TurnDeps:
        return deps

    try:
        result = await mcp_tool(REGISTRY[name], caller).run(arguments, context=None)
    except UnexpectedToolError as exc:  # a crash, not the caller's mistake: the usual 500
        raise exc.__cause__ or exc from None
    except ToolError as exc:
        raise ValidationError(str(exc).removeprefix(f"Error executing tool {name}: ")) from None
    text, structured = door_text(result)
    return ToolResult(tool=name, result=text, structured=structured)
