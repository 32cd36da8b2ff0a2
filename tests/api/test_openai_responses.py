"""The Responses API (`POST /v1/responses`) driven by the real `openai` SDK against a live server:
text and message-list input, streamed events the SDK's accumulator reads, `previous_response_id` on
the same session, `store: false` (a chat not remembered), Idempotency-Key replays in both modes,
OpenAI-shaped errors and refused parameters. The Agents SDK's default model makes the same calls
(`client.responses.create`, plain and `stream=True`); it is not installed here, docs/doors/openai.md
shows its client script."""

from __future__ import annotations

import uuid
from typing import Any

import openai
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from orrery.db.engine import Database
from orrery.db.models import ChatSession
from tests.api.live import LiveServer


def _client(live: LiveServer, demo: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=live.base_url, api_key=demo.api_key, max_retries=0)


async def _session(db: Database, sid: str) -> ChatSession:
    async with db.sessions() as s:
        found = await s.get(ChatSession, uuid.UUID(sid))
        assert found is not None
        return found


async def test_text_input_then_previous_response_id_continues_the_session(
    live: LiveServer, demo: Any, db: Database
) -> None:
    client = _client(live, demo)
    first = await client.responses.with_raw_response.create(
        model="orrery/coach", input="How does overage billing work?", instructions="Be brief."
    )
    response = first.parse()
    sid = first.headers["X-Orrery-Session"]
    assert response.status == "completed" and response.output_text
    assert response.usage is not None and response.usage.total_tokens >= response.usage.output_tokens
    second = await client.responses.with_raw_response.create(
        model="orrery/coach",
        input=[{"role": "user", "content": "And the plan?"}],
        previous_response_id=response.id,
    )
    assert second.headers["X-Orrery-Session"] == sid and second.parse().output_text
    assert (await _session(db, sid)).message_count == 4
    assert (await _session(db, sid)).remember is True


async def test_stream_has_the_sdk_event_types_and_the_text(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    messages: Any = [
        {"role": "system", "content": "Be brief."},  # the caller's instructions
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Plan my week"}]},
    ]
    async with client.responses.stream(model="orrery/planner", input=messages) as stream:
        types = [event.type async for event in stream]
        final = await stream.get_final_response()
    assert types[:2] == ["response.created", "response.in_progress"]
    opened = types.index("response.content_part.added")  # after any tool items (`mcp_call`)
    assert types[opened - 1] == "response.output_item.added"
    assert "response.output_text.delta" in types and types[-1] == "response.completed"
    assert final.output_text and final.status == "completed"
    raw = await client.responses.create(model="orrery/planner", input="Plan my day", stream=True)
    deltas = [e.delta async for e in raw if e.type == "response.output_text.delta"]
    assert "".join(deltas)


async def test_store_false_starts_a_chat_not_remembered(live: LiveServer, demo: Any, db: Database) -> None:
    client = _client(live, demo)
    kept = await client.responses.with_raw_response.create(model="orrery", input="Remember this one")
    forgotten = await client.responses.with_raw_response.create(
        model="orrery", input="Just between us", store=False
    )
    assert forgotten.headers["X-Orrery-Session"] != kept.headers["X-Orrery-Session"]
    assert (await _session(db, forgotten.headers["X-Orrery-Session"])).remember is False
    assert (await _session(db, kept.headers["X-Orrery-Session"])).remember is True
    assert forgotten.parse().store is False
    # as on chat completions: `store: false` later in a remembered conversation switches it off
    again = await client.responses.with_raw_response.create(
        model="orrery", input="Remember this one", store=False
    )
    assert again.headers["X-Orrery-Session"] == kept.headers["X-Orrery-Session"]
    assert (await _session(db, kept.headers["X-Orrery-Session"])).remember is False


async def test_idempotency_key_replays_the_text_streamed_and_not(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    for stream in (False, True):
        key = {"Idempotency-Key": f"responses-{stream}"}
        texts = []
        for _ in range(2):
            if stream:
                events = await client.responses.create(
                    model="orrery", input="Replay", stream=True, extra_headers=key
                )
                texts.append(
                    "".join([e.delta async for e in events if e.type == "response.output_text.delta"])
                )
            else:
                done = await client.responses.create(model="orrery", input="Replay", extra_headers=key)
                texts.append(done.output_text)
        assert texts[0] and texts[1] == texts[0], (stream, texts)


async def test_errors_and_refused_parameters(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    with pytest.raises(openai.NotFoundError) as model:
        await client.responses.create(model="gpt-4o", input="x")
    assert model.value.code == "model_not_found" and model.value.param == "model"
    with pytest.raises(openai.NotFoundError) as previous:
        await client.responses.create(model="orrery", input="x", previous_response_id=f"resp_{'0' * 48}")
    assert previous.value.param == "previous_response_id"
    with pytest.raises(openai.BadRequestError) as no_user:
        await client.responses.create(model="orrery", input=[{"role": "assistant", "content": "hi"}])
    assert no_user.value.param == "input"
    with pytest.raises(openai.BadRequestError) as wrong_item:
        await client.responses.create(
            model="orrery", input=[{"type": "function_call_output", "call_id": "c", "output": "1"}]
        )
    assert wrong_item.value.type == "invalid_request_error" and wrong_item.value.param
    plain = await client.responses.create(
        model="orrery", input="x", tools=[], text={"format": {"type": "text"}}, temperature=0.2, include=[]
    )
    assert plain.output_text
    stranger = openai.AsyncOpenAI(base_url=live.base_url, api_key="orr_not-a-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as refused:
        await stranger.responses.create(model="orrery", input="x")
    assert refused.value.code == "invalid_api_key"


async def test_model_failure_is_response_failed(live: LiveServer, demo: Any) -> None:
    def fail(messages: list[ModelMessage], info: AgentInfo) -> Any:
        raise RuntimeError("provider is down")

    async def fail_stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        raise RuntimeError("provider is down")
        yield ""  # pragma: no cover - makes this an async generator

    live.app.state.orchestrator.model_factory = lambda _name, _settings: FunctionModel(
        fail, stream_function=fail_stream
    )
    client = _client(live, demo)
    with pytest.raises(openai.APIStatusError) as caught:
        await client.responses.create(model="orrery/planner", input="Plan my week")
    assert caught.value.status_code == 502 and caught.value.code == "model_error"
    events = await client.responses.create(model="orrery/planner", input="Plan my week", stream=True)
    seen = [e async for e in events]
    assert seen[-1].type == "response.failed" and seen[-1].response.error is not None
    assert "provider is down" not in seen[-1].response.error.message
