"""The model machinery's floor: what a bare pydantic-ai run costs in CPU for the door benchmark's
reply shape (one tool call, then ~46 streamed text deltas), with an instant function model — no
database, no HTTP, no Orrery. Three ways of driving it: `run_stream_events` (what turns used first),
`Agent.iter` with each node's own stream (what they used next), and the turn's own loop on
pydantic-ai's direct API (`orrery.agents.model_loop`, what `orrery.agents.model_run` does now).
The door benchmark's CPU per turn cannot go below the last.

`python -m bench.model_floor [--runs 300] [--deltas 46]`
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from orrery.agents.model_loop import LoopSpec, run_loop

INSTRUCTIONS = "You are a planner. " * 200  # about the size of a turn's system prompt


def _agent(deltas: int) -> Agent[int, str]:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if not any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            yield {0: DeltaToolCall(name="search", json_args='{"query": "billing"}', tool_call_id="c1")}
            return
        for _ in range(deltas):
            yield "word "

    def search(ctx: RunContext[int], query: str) -> str:
        """Search the knowledge base.

        Args:
            query: What to look for.
        """
        return "- **BR-012:** Usage overage billing\n" * 5

    return Agent(FunctionModel(stream_function=stream), deps_type=int, tools=[search], retries=2)


async def _by_events(agent: Agent[int, str]) -> int:
    seen = 0
    async with agent.run_stream_events("what should I do next?", deps=1, instructions=INSTRUCTIONS) as events:
        async for _ in events:
            seen += 1
    return seen


async def _by_nodes(agent: Agent[int, str]) -> int:
    seen = 0
    async with agent.iter("what should I do next?", deps=1, instructions=INSTRUCTIONS) as run:
        async for node in run:
            if Agent.is_model_request_node(node) or Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as stream:
                    async for _ in stream:
                        seen += 1
    return seen


def _by_loop(agent: Agent[int, str]) -> Callable[[Agent[int, str]], Awaitable[int]]:
    """A driver through the turn's loop, its model and tools taken from `agent` once (as a turn's are)."""
    assert agent.model is not None and not isinstance(agent.model, str)
    tools = FunctionToolset(list(agent._function_toolset.tools.values()), max_retries=2)  # noqa: SLF001
    spec = LoopSpec(agent.model, tools, INSTRUCTIONS, 1)

    async def drive(_agent: Agent[int, str]) -> int:
        seen = 0
        async for _ in run_loop(spec, [], "what should I do next?"):
            seen += 1
        return seen

    return drive


async def _cpu_ms(
    drive: Callable[[Agent[int, str]], Awaitable[Any]], agent: Agent[int, str], runs: int
) -> float:
    await drive(agent)  # warm
    started = time.process_time()
    for _ in range(runs):
        await drive(agent)
    return (time.process_time() - started) * 1000 / runs


def main(argv: list[str] | None = None) -> None:
    """Print CPU ms per run for both ways of driving the same run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--deltas", type=int, default=46)
    args = parser.parse_args(argv)
    agent = _agent(args.deltas)
    print(f"| pydantic-ai run (1 tool call + {args.deltas} deltas) | CPU ms per run |\n|---|---:|")
    drivers = (
        ("run_stream_events", _by_events),
        ("Agent.iter + node streams", _by_nodes),
        ("the turn's loop (direct API + ToolManager)", _by_loop(agent)),
    )
    for name, drive in drivers:
        print(f"| {name} | {asyncio.run(_cpu_ms(drive, agent, args.runs)):.1f} |")


if __name__ == "__main__":
    main()
