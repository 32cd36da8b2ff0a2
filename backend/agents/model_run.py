"""The model's part of a turn: one pydantic-ai run, streamed as turn events.

The `Agent` (its tools, retries and name) is built once per process and agent definition; the turn's
model and system prompt are given to each run. The run is driven node by node (`Agent.iter`, each
model request's and tool call's own stream), the least machinery that keeps streaming, tools and
history: `run_stream_events` adds a task and a memory stream per event, about twice the CPU per delta.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic_ai import Agent, AgentRunResultEvent
from pydantic_ai.models import Model

from backend.agents.turn_events import ModelEvent, TurnEvent, history_of, translate
from backend.deps import TurnDeps
from backend.roster import AgentDefinition
from backend.sections import ScopedMessage
from tools.handoff import handoff_tool
from tools.registry import agent_tools


@dataclass
class ModelRun:
    """What one model run left behind: its result, and the tool calls seen while it streamed."""

    result: Any = None
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)


@cache
def runner_for(agent_id: str, tools: tuple[str, ...], roster: tuple[str, ...]) -> Agent[TurnDeps, str]:
    """The agent's pydantic-ai `Agent`, without a model or instructions (each run brings its own);
    keyed by the roster too, since the handoff tool lists it."""
    del roster  # part of the cache key only: `handoff_tool()` reads the current roster
    return Agent(
        None,
        deps_type=TurnDeps,
        tools=[*agent_tools(tools), handoff_tool()],
        retries=2,
        name=agent_id,
    )


def history_for(messages: list[ScopedMessage], text: str) -> list[Any]:
    """The scoped messages before the turn's own message, as pydantic-ai history (the notes after
    failed turns are in `messages` already)."""
    earlier = messages[:-1] if messages and messages[-1]["content"] == text else messages
    return history_of(earlier)


async def stream_model(
    chosen: AgentDefinition,
    model: Model,
    system_prompt: str,
    history: list[Any],
    text: str,
    deps: TurnDeps,
    run: ModelRun,
    on_model_event: Callable[[ModelEvent], None] | None = None,
) -> AsyncIterator[TurnEvent]:
    """Run the model on `text` and yield its turn events; the result and tool calls land in `run`.
    `on_model_event` sees every raw pydantic-ai event, ending with the run's result event."""
    from backend.roster import AGENTS

    runner = runner_for(chosen.id, chosen.tools, tuple(AGENTS))
    async with runner.iter(
        text, message_history=history, deps=deps, model=model, instructions=system_prompt
    ) as agent_run:
        async for node in agent_run:
            if not (Agent.is_model_request_node(node) or Agent.is_call_tools_node(node)):
                continue
            async with node.stream(agent_run.ctx) as events:
                async for event in events:
                    if on_model_event is not None:
                        on_model_event(event)
                    for out in translate(event, run.calls):
                        yield out
        run.result = agent_run.result
    if on_model_event is not None and run.result is not None:
        on_model_event(AgentRunResultEvent(run.result))
