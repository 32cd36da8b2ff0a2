"""The model's part of a turn: one model loop (`model_loop`), streamed as turn events.

The toolset (the agent's tools and the handoff tool) is built once per process and set of tools;
the turn's model and system prompt are given to each run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from pydantic_ai import AgentRunResultEvent, RunContext
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from orrery.agents.client_tools import ClientTools, with_client_tools
from orrery.agents.model_loop import LoopSpec, Resumed, run_loop
from orrery.agents.turn_events import ModelEvent, TurnEvent, history_of, translate
from orrery.deps import TurnDeps
from orrery.roster import AgentDefinition
from orrery.sections import ScopedMessage
from orrery.tools.handoff import handoff_tool
from orrery.tools.registry import agent_tools


@dataclass
class ModelRun:
    """What one model run left behind: its result, and the tool calls seen while it streamed."""

    result: Any = None
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)


class ListedOnce(FunctionToolset[TurnDeps]):
    """A `FunctionToolset` that lists its tools once when none has a `prepare` function: the list
    cannot change between steps or turns then, and listing builds a run context per tool (~0.5 ms
    a step for an agent's ten tools)."""

    _listed: dict[str, ToolsetTool[TurnDeps]] | None = None

    async def get_tools(self, ctx: RunContext[TurnDeps]) -> dict[str, ToolsetTool[TurnDeps]]:
        if self._listed is not None:
            return dict(self._listed)
        listed = {name: _without_return_schema(tool) for name, tool in (await super().get_tools(ctx)).items()}
        if all(tool.prepare is None for tool in self.tools.values()):
            self._listed = listed
        return dict(listed)


def _without_return_schema(tool: ToolsetTool[TurnDeps]) -> ToolsetTool[TurnDeps]:
    """The tool without the return schema it did not opt in to: pydantic-ai drops that schema from a
    copy of each such tool's definition on every model request (~0.3 ms a turn), so it is gone once."""
    definition = tool.tool_def
    if definition.include_return_schema or definition.return_schema is None:
        return tool
    return replace(tool, tool_def=replace(definition, return_schema=None))


@cache
def toolset_for(tools: tuple[str, ...], roster: tuple[str, ...]) -> FunctionToolset[TurnDeps]:
    """The agent's tools and the handoff tool, one per set of tools; keyed by the roster too, since
    the handoff tool lists it."""
    del roster  # part of the cache key only: `handoff_tool()` reads the current roster
    return ListedOnce([*agent_tools(tools), handoff_tool()], max_retries=2)


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
    client: ClientTools | None = None,
    resumed: Resumed | None = None,
    settings: ModelSettings | None = None,
) -> AsyncIterator[TurnEvent]:
    """Run the model on `text` and yield its turn events; the result and tool calls land in `run`.
    `on_model_event` sees every raw pydantic-ai event, ending with the run's result event. `client`:
    the caller's tools (OpenAI doors); `resumed`: a suspended run to continue instead; `settings`:
    the caller's model settings (`agents.caller`)."""
    from orrery.roster import AGENTS

    toolset = with_client_tools(toolset_for(chosen.tools, tuple(AGENTS)), client)
    require = client is not None and client.require_tool
    spec = LoopSpec(
        model, toolset, system_prompt, deps, name=chosen.id, require_tool=require, settings=settings
    )
    async for event in run_loop(spec, history, text, resumed):
        if on_model_event is not None:
            on_model_event(event)
        if isinstance(event, AgentRunResultEvent):
            run.result = event.result
            continue
        for out in translate(event, run.calls):
            yield out
