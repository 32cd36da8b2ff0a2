"""The caller's own tools on the OpenAI chat-completions door (issue 50), driven by the real `openai`
SDK against a live server, with a scripted model: a caller's tool call suspends the turn, the
caller's `role: "tool"` result resumes it, the stored chat keeps the call with its result, and the
refusals (a clash with a server tool, a result for a call not pending) are OpenAI-shaped 400s."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo

from tests.api.live import LiveServer
from tests.support.models import streaming

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
SEEN: list[list[str]] = []


def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls the caller's `get_weather` (and, when offered, the server's `search_memory` in the same
    step), then answers with what the caller's tool returned."""
    SEEN.append([t.name for t in info.function_tools])
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    weather = [p for p in returns if p.tool_name == "get_weather"]
    if weather:
        return ModelResponse(parts=[TextPart(f"Weather says: {weather[-1].content}")])
    if not any(t.name == "get_weather" for t in info.function_tools):
        return ModelResponse(parts=[TextPart("No tool of yours offered.")])
    parts: list[Any] = [ToolCallPart("get_weather", {"city": "Paris"}, "call_w1")]
    if any(t.name == "search_memory" for t in info.function_tools):
        parts.insert(0, ToolCallPart("search_memory", {"query": "paris"}, "call_s1"))
    return ModelResponse(parts=parts)


@pytest.fixture
def tooled(live: LiveServer) -> LiveServer:
    SEEN.clear()
    live.app.state.orchestrator.model_factory = lambda _name, _settings: streaming(_respond)
    return live


def _client(live: LiveServer, demo: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=live.base_url, api_key=demo.api_key, max_retries=0)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_callers_tool_suspends_the_turn_and_its_result_resumes_it(
    tooled: LiveServer, demo: Any, stream: bool
) -> None:
    client = _client(tooled, demo)
    messages: list[Any] = [{"role": "user", "content": f"Weather in Paris? stream={stream}"}]
    if stream:
        chunks = [
            c
            async for c in await client.chat.completions.create(
                model="orrery/planner", messages=messages, tools=[WEATHER], stream=True
            )
        ]
        finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
        assert finish == ["tool_calls"]
        pieces = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or []]
        call_id, name, arguments = pieces[0].id, pieces[0].function.name, pieces[0].function.arguments
    else:
        first = await client.chat.completions.create(
            model="orrery/planner", messages=messages, tools=[WEATHER]
        )
        assert first.choices[0].finish_reason == "tool_calls"
        call = first.choices[0].message.tool_calls[0]
        call_id, name, arguments = call.id, call.function.name, call.function.arguments
    assert (call_id, name, json.loads(arguments)) == ("call_w1", "get_weather", {"city": "Paris"})
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": "sunny, 21 C"},
    ]
    raw = await client.chat.completions.with_raw_response.create(
        model="orrery/planner", messages=messages, tools=[WEATHER]
    )
    second = raw.parse()
    assert second.choices[0].finish_reason == "stop"
    assert second.choices[0].message.content == "Weather says: sunny, 21 C"
    session = raw.headers["x-orrery-session"]
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {demo.api_key}"}) as http:
        history = (await http.get(f"{tooled.base_url}/sessions/{session}")).json()["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"]  # one turn: the call and its result in it
    stored = {c["name"]: c for c in history[-1]["tool_calls"]}
    assert stored["get_weather"]["result"] == "sunny, 21 C"
    assert "result" in stored["search_memory"]  # the server's call of the same step ran on the server


async def test_refusals_are_openai_shaped(tooled: LiveServer, demo: Any) -> None:
    client = _client(tooled, demo)
    clash = {"type": "function", "function": {"name": "search_memory", "parameters": {"type": "object"}}}
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(
            model="orrery/planner", messages=[{"role": "user", "content": "hi"}], tools=[clash]
        )
    assert "search_memory" in caught.value.message and "server tool" in caught.value.message
    stray: list[Any] = [
        {"role": "user", "content": "A chat with no pending call"},
        {"role": "tool", "tool_call_id": "call_nope", "content": "42"},
    ]
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(model="orrery/planner", messages=stray, tools=[WEATHER])
    assert "call_nope" in caught.value.message and "pending" in caught.value.message


async def test_tool_choice_none_hides_the_callers_tools(tooled: LiveServer, demo: Any) -> None:
    client = _client(tooled, demo)
    reply = await client.chat.completions.create(
        model="orrery/planner",
        messages=[{"role": "user", "content": "Weather? none"}],
        tools=[WEATHER],
        tool_choice="none",
    )
    assert reply.choices[0].message.content == "No tool of yours offered."
    assert "get_weather" not in SEEN[-1] and "search_memory" in SEEN[-1]
