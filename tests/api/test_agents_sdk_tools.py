"""Real agent frameworks on Orrery's OpenAI doors with their own tools (issue 50): an OpenAI Agents
SDK agent with two function tools and a handoff, on both of its model classes (Responses and chat
completions), streamed and not; LangChain's `bind_tools`. Orrery's model is a fake
OpenAI-compatible provider on loopback that calls tools: the agents' calls suspend Orrery's turn,
the frameworks run them and send the results, and the turn resumes until the final answer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.live import LiveServer
from tests.support.upstream import FakeProvider, client_model, fake_provider

agents = pytest.importorskip("agents")


def _call(name: str, arguments: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def script(body: dict[str, Any]) -> dict[str, Any]:
    """Weather and time together (with Orrery's own `search_memory` in the same step), then the
    handoff to the booker, then its `book_table`, then the answer with the booking's result."""
    offered = {t["function"]["name"] for t in body.get("tools") or []}
    messages = body["messages"]
    called = {c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
    if "book_table" in offered:
        if "book_table" not in called:
            return {"tool_calls": [_call("book_table", '{"time": "19:00"}', "call_book")]}
        return {"content": f"Booked: {messages[-1]['content']}"}
    if "get_weather" not in called:
        calls = [_call("get_weather", '{"city": "Paris"}', "call_weather")]
        calls.append(_call("get_time", '{"city": "Paris"}', "call_time"))
        if "search_memory" in offered:
            calls.insert(0, _call("search_memory", '{"query": "paris"}', "call_memory"))
        return {"tool_calls": calls}
    if "transfer_to_booker" in offered and "transfer_to_booker" not in called:
        return {"tool_calls": [_call("transfer_to_booker", "{}", "call_handoff")]}
    return {"content": "Nothing to book."}


@pytest.fixture
def provider(live: LiveServer) -> Iterator[FakeProvider]:
    with fake_provider() as (found, base):
        found.mode, found.script = "script", script
        model = client_model("direct", "openai/fake-model", base)
        live.app.state.orchestrator.model_factory = lambda _n, _s: model
        yield found


def _agent(live: LiveServer, demo: Any, model_class: str) -> Any:
    import openai

    client = openai.AsyncOpenAI(base_url=live.base_url, api_key=demo.api_key, max_retries=0)
    model_type = (
        agents.OpenAIResponsesModel if model_class == "responses" else agents.OpenAIChatCompletionsModel
    )
    model = model_type(model="orrery/planner", openai_client=client)
    ran: list[str] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append("get_weather")
        return f"sunny in {city}"

    @agents.function_tool
    def get_time(city: str) -> str:
        """The local time in a city."""
        ran.append("get_time")
        return f"18:00 in {city}"

    @agents.function_tool
    def book_table(time: str) -> str:
        """Book a table."""
        ran.append("book_table")
        return f"table for two at {time}"

    booker = agents.Agent(name="booker", instructions="Book tables.", tools=[book_table], model=model)
    triage = agents.Agent(
        name="triage", instructions="Help.", tools=[get_weather, get_time], handoffs=[booker], model=model
    )
    triage.ran = ran  # type: ignore[attr-defined]
    return triage


@pytest.mark.parametrize("model_class", ["responses", "chat"])
@pytest.mark.parametrize("stream", [False, True])
async def test_an_agents_sdk_agent_with_tools_and_a_handoff(
    live: LiveServer, demo: Any, provider: FakeProvider, model_class: str, stream: bool
) -> None:
    agents.set_tracing_disabled(True)
    triage = _agent(live, demo, model_class)
    question = f"Weather and time in Paris, then book dinner ({model_class}, stream={stream})"
    if stream:
        result = agents.Runner.run_streamed(triage, question)
        [event async for event in result.stream_events()]
    else:
        result = await agents.Runner.run(triage, question)
    assert result.final_output == "Booked: table for two at 19:00"
    assert result.last_agent.name == "booker"
    assert sorted(triage.ran) == ["book_table", "get_time", "get_weather"]
    # one Orrery turn: every step of the model saw the whole run, the server's search among it
    last = provider.requests[-1]["messages"]
    assert [m["tool_call_id"] for m in last if m["role"] == "tool"] == [
        "call_memory",
        "call_weather",
        "call_time",
        "call_handoff",
        "call_book",
    ]


async def test_langchain_bind_tools(live: LiveServer, demo: Any, provider: FakeProvider) -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_core.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @tool
    def get_time(city: str) -> str:
        """The local time in a city."""
        return f"18:00 in {city}"

    chat = langchain_openai.ChatOpenAI(
        model="orrery/planner", base_url=live.base_url, api_key=demo.api_key, max_retries=0
    ).bind_tools([get_weather, get_time])
    messages: list[Any] = [HumanMessage("Weather and time in Paris? (langchain)")]
    first = await chat.ainvoke(messages)
    assert [c["name"] for c in first.tool_calls] == ["get_weather", "get_time"]
    messages.append(first)
    tools = {"get_weather": get_weather, "get_time": get_time}
    for call in first.tool_calls:
        messages.append(ToolMessage(tools[call["name"]].invoke(call["args"]), tool_call_id=call["id"]))
    second = await chat.ainvoke(messages)
    assert second.content == "Nothing to book." and not second.tool_calls
