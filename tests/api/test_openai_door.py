"""The OpenAI-compatible door driven by the real `openai` SDK against a live server: race-free
session mapping, one session per client conversation, OpenAI-shaped errors, model failures in
streams, and `stream_options.include_usage`."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sqlalchemy import func, select

from orrery.db.engine import Database
from orrery.db.models import ChatSession
from tests.api.live import LiveServer
from tests.support.patience import HANG_GUARD_SECONDS


def _client(live: LiveServer, demo: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=live.base_url, api_key=demo.api_key, max_retries=0, timeout=HANG_GUARD_SECONDS
    )


async def _session_count(db: Database, demo: Any) -> int:
    async with db.sessions() as s:
        query = select(func.count()).select_from(ChatSession).where(ChatSession.user_id == demo.user_id)
        return int((await s.execute(query)).scalar_one())


async def test_concurrent_first_requests_share_one_session(live: LiveServer, demo: Any, db: Database) -> None:
    client = _client(live, demo)
    before = await _session_count(db, demo)
    messages: Any = [{"role": "user", "content": "How does overage billing work?"}]

    async def ask(stream: bool) -> str:
        if stream:
            async with client.chat.completions.with_streaming_response.create(
                model="orrery/planner", user="racer", messages=messages, stream=True
            ) as response:
                [line async for line in response.iter_lines()]
                return response.headers["x-orrery-session"]
        raw = await client.chat.completions.with_raw_response.create(
            model="orrery/planner", user="racer", messages=messages
        )
        return raw.headers["x-orrery-session"]

    ids = await asyncio.gather(*(ask(stream=i % 2 == 1) for i in range(4)))
    assert len(set(ids)) == 1
    assert await _session_count(db, demo) == before + 1
    again = await client.chat.completions.create(model="orrery", user="racer", messages=messages)
    assert again.choices[0].message.content


async def test_each_client_conversation_maps_to_its_own_session(live: LiveServer, demo: Any) -> None:
    """Open WebUI-style: the whole chat is resent each time; the first user message names it."""
    client = _client(live, demo)

    async def turn(messages: Any, user: str | None = "webui") -> str:
        raw = await client.chat.completions.with_raw_response.create(
            model="orrery/planner", user=user, messages=messages
        )
        return raw.headers["x-orrery-session"]

    chat_a = await turn([{"role": "user", "content": "Plan my week"}])
    chat_b = await turn([{"role": "user", "content": "How does overage billing work?"}])
    assert chat_a != chat_b
    follow_up = [
        {"role": "system", "content": "You are helpful"},
        {"role": "user", "content": "Plan my week"},
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": "And the next one?"},
    ]
    assert await turn(follow_up) == chat_a
    assert await turn([{"role": "user", "content": "Plan my week"}], user="someone-else") != chat_a
    headers = {"Authorization": f"Bearer {demo.api_key}"}
    async with httpx.AsyncClient(headers=headers, timeout=HANG_GUARD_SECONDS) as http:
        history = (await http.get(f"{live.base_url}/sessions/{chat_a}")).json()["messages"]
        explicit = await http.post(
            f"{live.base_url}/chat/completions",
            headers={"X-Orrery-Session": chat_b},
            json={"model": "orrery", "messages": [{"role": "user", "content": "Plan my week"}]},
        )
    assert [m["content"] for m in history if m["role"] == "user"] == ["Plan my week", "And the next one?"]
    assert explicit.headers["x-orrery-session"] == chat_b


async def test_unknown_model_is_openai_404(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    for model in ("orrery/wizard", "gpt-4o"):
        with pytest.raises(openai.NotFoundError) as caught:
            await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "x"}])
        assert caught.value.code == "model_not_found" and caught.value.type == "invalid_request_error"


async def test_model_failure_is_an_error_not_a_reply(live: LiveServer, demo: Any) -> None:
    def fail(messages: list[ModelMessage], info: AgentInfo) -> Any:
        raise RuntimeError("provider is down")

    async def fail_stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        raise RuntimeError("provider is down")
        yield ""  # pragma: no cover - makes this an async generator

    live.app.state.orchestrator.model_factory = lambda _name, _settings: FunctionModel(
        fail, stream_function=fail_stream
    )
    client = _client(live, demo)
    messages: Any = [{"role": "user", "content": "Plan my week"}]
    with pytest.raises(openai.APIStatusError) as caught:
        await client.chat.completions.create(model="orrery/planner", messages=messages)
    assert caught.value.status_code == 502 and caught.value.code == "model_error"
    assert "the model failed" in caught.value.message  # a short message: internals only in the log
    assert "provider is down" not in caught.value.message
    stream = await client.chat.completions.create(model="orrery/planner", messages=messages, stream=True)
    seen: list[Any] = []
    with pytest.raises(openai.APIError, match="the model failed"):
        async for chunk in stream:
            seen.append(chunk)
    assert all(c.choices[0].finish_reason is None for c in seen if c.choices)
    assert "error" not in "".join(c.choices[0].delta.content or "" for c in seen if c.choices)


async def test_stream_include_usage_ends_with_a_usage_chunk(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    stream = await client.chat.completions.create(
        model="orrery/planner",
        messages=[{"role": "user", "content": "How does overage billing work?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [c async for c in stream]
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert (
        chunks[-1].usage.total_tokens == chunks[-1].usage.prompt_tokens + chunks[-1].usage.completion_tokens
    )
    plain = await client.chat.completions.create(
        model="orrery/planner", messages=[{"role": "user", "content": "Plan my day"}], stream=True
    )
    assert all(c.usage is None for c in [c async for c in plain])


def test_hostile_bodies_are_4xx(live: LiveServer, demo: Any) -> None:
    def post(content: bytes) -> httpx.Response:
        headers = {"Authorization": f"Bearer {demo.api_key}", "Content-Type": "application/json"}
        return httpx.post(
            f"{live.base_url}/chat/completions", content=content, headers=headers, timeout=HANG_GUARD_SECONDS
        )

    lone = post(b'{"model": "orrery", "messages": [{"role": "user", "content": "hi \\ud800"}]}')
    assert lone.status_code == 400 and "surrogate" in lone.text
    assert lone.json()["error"]["param"] == "messages[0].content"
    no_user = post(b'{"model": "orrery", "messages": [{"role": "system", "content": "x"}]}')
    assert no_user.status_code == 400 and no_user.json()["error"]["type"] == "invalid_request_error"
    deep = post(b'{"messages": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert 400 <= deep.status_code < 500


async def test_idempotency_key_replay_carries_the_reply_streamed_and_not(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    messages: Any = [{"role": "user", "content": "Replay me, please"}]
    for stream in (False, True):
        key = {"Idempotency-Key": f"replay-{stream}"}
        texts = []
        for _ in range(2):  # the original, then the replay
            if stream:
                chunks = await client.chat.completions.create(
                    model="orrery/coach", messages=messages, stream=True, extra_headers=key
                )
                texts.append("".join([c.choices[0].delta.content or "" async for c in chunks if c.choices]))
            else:
                done = await client.chat.completions.create(
                    model="orrery/coach", messages=messages, extra_headers=key
                )
                texts.append(done.choices[0].message.content or "")
        assert texts[0] and texts[1] == texts[0], (stream, texts)


async def test_errors_have_openai_shape_and_status(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    with pytest.raises(openai.BadRequestError) as invalid:  # OpenAI answers 400 where FastAPI would 422
        await client.chat.completions.create(model="orrery", messages=[])
    assert invalid.value.type == "invalid_request_error" and invalid.value.param == "messages"
    wrong_type: Any = [{"role": "user", "content": 3}]
    with pytest.raises(openai.BadRequestError) as typed:
        await client.chat.completions.create(model="orrery", messages=wrong_type)
    assert typed.value.param == "messages[0].content"
    stranger = openai.AsyncOpenAI(base_url=live.base_url, api_key="orr_not-a-key", max_retries=0)
    for call in (
        stranger.models.list(),
        stranger.chat.completions.create(model="orrery", messages=[{"role": "user", "content": "x"}]),
    ):
        with pytest.raises(openai.AuthenticationError) as refused:
            await call
        assert refused.value.code == "invalid_api_key" and refused.value.type == "invalid_request_error"
    with pytest.raises(openai.NotFoundError) as session:
        await client.chat.completions.create(
            model="orrery",
            messages=[{"role": "user", "content": "x"}],
            extra_headers={"X-Orrery-Session": "00000000-0000-0000-0000-000000000000"},
        )
    assert session.value.type == "invalid_request_error" and session.value.param == "X-Orrery-Session"


async def test_openai_paths_not_served_name_what_is(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    with pytest.raises(openai.NotFoundError) as embeddings:
        await client.embeddings.create(model="orrery", input="x")
    with pytest.raises(openai.NotFoundError) as completions:
        await client.completions.create(model="orrery", prompt="x")
    for caught in (embeddings, completions):
        assert caught.value.type == "invalid_request_error" and caught.value.code == "unknown_url"
        assert "POST /v1/chat/completions, POST /v1/responses, GET /v1/models" in caught.value.message
    headers = {"Authorization": f"Bearer {demo.api_key}"}
    too_big = b"x" * (live.app.state.settings.max_body_bytes + 1)
    async with httpx.AsyncClient(base_url=live.base_url, headers=headers, timeout=HANG_GUARD_SECONDS) as http:
        wrong_method = await http.get("/chat/completions")
        orrery_own = await http.get("/sessions/nope")  # Orrery's own paths keep Orrery's shape
        large = await http.post("/chat/completions", content=too_big)
    assert large.status_code == 413 and large.json()["error"]["type"] == "invalid_request_error"
    assert large.json()["error"]["code"] == "too_large"
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]["code"] == "method_not_allowed"
    assert orrery_own.json()["error"]["code"] == "not_found" and "type" not in orrery_own.json()["error"]


async def test_n_is_refused_naming_the_parameter(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    messages: Any = [{"role": "user", "content": "What is the weather?"}]
    for param, extra in (("n", {"n": 2}),):
        for stream in (False, True):
            with pytest.raises(openai.BadRequestError) as caught:
                await client.chat.completions.create(
                    model="orrery", messages=messages, stream=stream, **extra
                )
            assert caught.value.param == param and caught.value.code == "unsupported_parameter"
            assert param in caught.value.message
    asks_nothing = await client.chat.completions.create(
        model="orrery",
        messages=messages,
        tools=[],
        tool_choice="none",
        response_format={"type": "text"},
        n=1,
        temperature=0.1,
    )
    assert asks_nothing.choices[0].message.content
