"""The caller's own tools on a turn (OpenAI doors, issue 50): function tools an application sends with
its request, offered to the model beside the agent's server tools. pydantic-ai's `ExternalToolset`
holds them: the model loop runs server calls as always and stops at a call of the caller's
(`DeferredToolRequests`), so the turn suspends until the caller sends the result (`suspensions`).

`tool_choice`: `auto` (default) offers both; `none` hides the caller's tools (the agent's own still
run); `required` makes the first request call a tool; a function's name offers only that one of the
caller's tools and makes the first request call a tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, ExternalToolset

from orrery.errors import ValidationError
from orrery.roster import AGENTS

HANDOFF = "handoff_to_agent"


@dataclass(frozen=True)
class ClientTools:
    """The caller's tools of one request, its `tool_choice`, and the results it sends (call id ->
    output) when it resumes a suspended turn."""

    tools: tuple[ToolDefinition, ...] = ()
    choice: str = "auto"
    """`auto`, `none`, `required`, or the name of one of `tools`."""
    results: dict[str, str] = field(default_factory=dict)

    @property
    def require_tool(self) -> bool:
        return self.choice not in ("auto", "none")

    def offered(self) -> list[ToolDefinition]:
        """The caller's tools the model may call under `choice`."""
        if self.choice == "none":
            return []
        if self.choice in ("auto", "required"):
            return list(self.tools)
        return [t for t in self.tools if t.name == self.choice]


def with_client_tools(server: AbstractToolset[Any], client: ClientTools | None) -> AbstractToolset[Any]:
    """The agent's toolset, plus the caller's tools as external ones when it sent any."""
    offered = client.offered() if client is not None else []
    if not offered:
        return server
    return CombinedToolset([server, ExternalToolset(offered, id="client")])


def tool_definition(name: str, description: str | None, parameters: dict[str, Any] | None) -> ToolDefinition:
    """One caller's function as a tool definition (its JSON schema passed to the model as sent)."""
    schema = parameters or {"type": "object", "properties": {}}
    return ToolDefinition(
        name=name, description=description or "", parameters_json_schema=schema, kind="external"
    )


def server_tool_names(agent: str | None) -> set[str]:
    """The tools the agent runs itself (every agent's, when the router chooses)."""
    agents = [AGENTS[agent]] if agent in AGENTS else list(AGENTS.values())
    return {HANDOFF, *(name for a in agents for name in a.tools)}


def check_client_tools(client: ClientTools, agent: str | None) -> None:
    """Refuse a caller's tool named as a server tool (naming both), twice-named tools, and a
    `tool_choice` naming no tool of the request."""
    names = [t.name for t in client.tools]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValidationError(f"tools: the function {twice[0]!r} is defined twice")
    server = server_tool_names(agent)
    clash = sorted(set(names) & server)
    if clash:
        raise ValidationError(
            f"tools: your function {clash[0]!r} has the name of the server tool {clash[0]!r} that "
            f"the agent runs itself; rename your function"
        )
    if client.require_tool and client.choice != "required" and client.choice not in names:
        raise ValidationError(f"tool_choice names the function {client.choice!r}, which is not in tools")
