"""The handoff tool: a specialist asks for another one to take over from the next message on.

The tool is built once per agent roster (plugins can add agents), not every turn: building it derives
its JSON schema. What the model asked for lands in `TurnDeps.handoff`, a fresh `HandoffRequest` per
turn.
"""

from __future__ import annotations

from functools import cache

from pydantic_ai import ModelRetry, RunContext, Tool

from orrery.deps import TurnDeps
from orrery.roster import AGENTS


async def handoff_to_agent(ctx: RunContext[TurnDeps], agent: str, reason: str) -> str:
    """Hand the conversation to another specialist from the next message on.

    Args:
        agent: One of: {agents}.
        reason: Why this specialist fits better, in one sentence.
    """
    if agent not in AGENTS:
        raise ModelRetry(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")
    ctx.deps.handoff.to, ctx.deps.handoff.reason = agent, reason
    return f"Handing off to the {agent.replace('_', ' ')} from the next message on. Tell the user briefly."


def handoff_tool() -> Tool[TurnDeps]:
    """The handoff tool for the current roster (the model reads the current list of agents)."""
    return _for_roster(tuple(AGENTS))


@cache
def _for_roster(roster: tuple[str, ...]) -> Tool[TurnDeps]:
    tool = Tool(handoff_to_agent, takes_ctx=True, require_parameter_descriptions=True)
    schema = tool.function_schema.json_schema
    agent = schema.get("properties", {}).get("agent")
    if isinstance(agent, dict):
        agent["description"] = f"One of: {', '.join(roster)}."
    return tool
