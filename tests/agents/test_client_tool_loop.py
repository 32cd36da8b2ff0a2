"""The model loop with the caller's tools (issue 50), on pydantic-ai's `ExternalToolset` and a
`FunctionModel`: a step that calls a server tool and a caller's tool runs the server's and stops
with `DeferredToolRequests` for the caller's; the run resumed with the caller's result (`Resumed`)
continues from there, and the model sees both answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import AgentRunResultEvent, DeferredToolRequests, Tool
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from orrery.agents.client_tools import ClientTools, tool_definition, with_client_tools
from orrery.agents.model_loop import LoopSpec, Resumed, run_loop


def lookup(code: str) -> str:
    """Look an entry up."""
    return f"entry {code}"


SERVER = FunctionToolset([Tool(lookup)])
CLIENT = ClientTools((tool_definition("get_weather", "The weather", {"type": "object"}),))


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    returns = [
        p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
    ]
    if returns:
        yield " + ".join(f"{p.tool_name}={p.content}" for p in returns)
        return
    yield {0: DeltaToolCall("lookup", '{"code": "BR-1"}', tool_call_id="call_server")}
    yield {1: DeltaToolCall("get_weather", "{}", tool_call_id="call_client")}


def _spec() -> LoopSpec[None]:
    return LoopSpec(
        FunctionModel(stream_function=stream), with_client_tools(SERVER, CLIENT), "Be brief.", None
    )


async def _result(events: AsyncIterator[Any]) -> Any:
    return [e async for e in events if isinstance(e, AgentRunResultEvent)][0].result


async def test_a_callers_tool_call_stops_the_run_and_its_result_resumes_it() -> None:
    suspended = await _result(run_loop(_spec(), [], "Weather and BR-1?"))
    assert isinstance(suspended.output, DeferredToolRequests)
    assert [c.tool_call_id for c in suspended.output.calls] == ["call_client"]
    *before, served = suspended.all_messages()
    assert [p.tool_call_id for p in served.parts] == ["call_server"]  # the server's call ran
    answers = [*served.parts, ToolReturnPart("get_weather", "sunny", "call_client")]
    resumed = await _result(run_loop(_spec(), [], "", Resumed(before, answers)))
    assert resumed.output == "lookup=entry BR-1 + get_weather=sunny"


async def test_tool_choice_none_offers_only_the_server_tools() -> None:
    toolset = with_client_tools(SERVER, ClientTools(CLIENT.tools, "none"))
    assert toolset is SERVER
