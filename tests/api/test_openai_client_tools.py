"""The caller's own tools on the OpenAI chat-completions door (issue 50), driven by the real `openai`
SDK against a live server, with a scripted model: a caller's tool call suspends the turn, the
caller's `role: "tool"` result resumes it, the stored chat keeps the call with its result, and the
refusals (a clash with a server tool, a result for a call not pending) are OpenAI-shaped 400s."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
import openai
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo
from sqlalchemy import func, select

from orrery.db.engine import Database
from orrery.db.models import TurnSuspension
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
TEXT_ALLOWED: list[bool] = []


def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls the caller's `get_weather` (and, when offered, the server's `search_memory` in the same
    step), then answers with what the caller's tool returned."""
    if info.function_tools:  # a turn's request (a background job's offers no function tools)
        SEEN.append([t.name for t in info.function_tools])
        TEXT_ALLOWED.append(info.allow_text_output)
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
    TEXT_ALLOWED.clear()
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


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "get_weather"}}])
async def test_tool_choice_required_or_named_makes_the_first_request_call_a_tool(
    tooled: LiveServer, demo: Any, choice: Any
) -> None:
    client = _client(tooled, demo)
    named = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
    reply = await client.chat.completions.create(
        model="orrery/planner",
        messages=[{"role": "user", "content": f"Weather? {choice}"}],
        tools=[WEATHER, named],
        tool_choice=choice,
    )
    assert reply.choices[0].finish_reason == "tool_calls"
    assert TEXT_ALLOWED == [False]
    assert ("get_time" in SEEN[0]) is (choice == "required")  # a named choice offers only that one


def _resumed(messages: list[Any], call_id: str, result: str) -> list[Any]:
    call = {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    return [
        *messages,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


async def _pending(db: Database) -> int:
    async with db.sessions() as s:
        return int((await s.execute(select(func.count()).select_from(TurnSuspension))).scalar_one())


async def test_a_repeated_request_gets_the_same_calls_and_runs_nothing_twice(
    tooled: LiveServer, demo: Any, db: Database
) -> None:
    client = _client(tooled, demo)
    asked: list[Any] = [{"role": "user", "content": "Weather, idempotently?"}]
    key = {"Idempotency-Key": "weather-1"}
    first = await client.chat.completions.create(
        model="orrery/planner", messages=asked, tools=[WEATHER], extra_headers=key
    )
    again = await client.chat.completions.create(
        model="orrery/planner", messages=asked, tools=[WEATHER], extra_headers=key
    )
    assert again.choices[0].message.tool_calls == first.choices[0].message.tool_calls
    assert len(SEEN) == 1 and await _pending(db) == 1
    done = await client.chat.completions.create(
        model="orrery/planner", messages=_resumed(asked, "call_w1", "hail"), tools=[WEATHER]
    )
    replayed = await client.chat.completions.create(
        model="orrery/planner", messages=_resumed(asked, "call_w1", "hail"), tools=[WEATHER]
    )
    assert done.choices[0].message.content == replayed.choices[0].message.content == "Weather says: hail"
    assert len(SEEN) == 2 and await _pending(db) == 0


async def test_an_abandoned_suspension_expires_and_is_marked_in_the_chat(
    tooled: LiveServer, demo: Any, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _client(tooled, demo)
    asked: list[Any] = [{"role": "user", "content": "Weather, but I walk away?"}]
    raw = await client.chat.completions.with_raw_response.create(
        model="orrery/planner", messages=asked, tools=[WEATHER]
    )
    session = raw.headers["x-orrery-session"]
    later = timedelta(seconds=tooled.app.state.settings.client_tool_timeout_seconds + 1)
    monkeypatch.setattr("orrery.db.base.CLOCK_OFFSET", later)  # the injected clock: past the timeout
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(
            model="orrery/planner", messages=_resumed(asked, "call_w1", "late"), tools=[WEATHER]
        )
    assert "call_w1" in caught.value.message  # abandoned: by this request, or by its job if it ran first
    assert await _pending(db) == 0
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {demo.api_key}"}) as http:
        history = (await http.get(f"{tooled.base_url}/sessions/{session}")).json()["messages"]
    assert [(m["role"], m["status"]) for m in history] == [("user", "failed")]


async def test_the_responses_api_suspends_and_resumes_with_function_call_output(
    tooled: LiveServer, demo: Any
) -> None:
    client = _client(tooled, demo)
    tool = {"type": "function", "name": "get_weather", "parameters": WEATHER["function"]["parameters"]}
    first = await client.responses.create(model="orrery/planner", input="Weather (Responses)?", tools=[tool])
    calls = [o for o in first.output if o.type == "function_call"]
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("call_w1", "get_weather", {"city": "Paris"})
    ]
    output = {"type": "function_call_output", "call_id": "call_w1", "output": "fog"}
    second = await client.responses.create(
        model="orrery/planner", previous_response_id=first.id, input=[output], tools=[tool]
    )
    assert second.output_text == "Weather says: fog"
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model="orrery/planner",
            previous_response_id=second.id,
            input=[{**output, "call_id": "call_other"}],
            tools=[tool],
        )
    assert "call_other" in caught.value.message


async def test_the_offline_model_calls_a_callers_tool_and_answers_with_its_result(
    live: LiveServer, demo: Any
) -> None:
    client = _client(live, demo)  # no key: the offline model
    asked: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = await client.chat.completions.create(model="orrery/planner", messages=asked, tools=[WEATHER])
    call = first.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "get_weather",
        {"city": "What is the weather in Paris?"},
    )
    answered = [
        *asked,
        {"role": "assistant", "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
    ]
    second = await client.chat.completions.create(model="orrery/planner", messages=answered, tools=[WEATHER])
    assert second.choices[0].message.content == "Your tools answered: get_weather: sunny"
