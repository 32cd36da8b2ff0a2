"""The handoff tool: a specialist asks for another one to take over from the next message on.

The tool is built once per process (its JSON schema is not rebuilt every turn); what the model
asked for lands in `TurnDeps.handoff`, a fresh `HandoffRequest` per turn.
"""

from __future__ import annotations

from functools import cache

from pydantic_ai import ModelRetry, RunContext, Tool

from backend.deps import TurnDeps
from backend.vocabulary import AGENT_IDS, AgentId


async def handoff_to_agent(ctx: RunContext[TurnDeps], agent: AgentId, reason: str) -> str:
    """Hand the conversation to another specialist from the next message on.

    Args:
        agent: coach, goal_architect, pattern_analyst, motivator, accountability_partner or planner.
        reason: Why this specialist fits better, in one sentence.
    """
    if agent not in AGENT_IDS:
        raise ModelRetry(f"unknown agent {agent!r}; choose one of {', '.join(AGENT_IDS)}")
    ctx.deps.handoff.to, ctx.deps.handoff.reason = agent, reason
    return f"Handing off to the {agent.replace('_', ' ')} from the next message on. Tell the user briefly."


@cache
def handoff_tool() -> Tool[TurnDeps]:
    """The process-wide handoff tool."""
    return Tool(handoff_to_agent, takes_ctx=True, require_parameter_descriptions=True)
