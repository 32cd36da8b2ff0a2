"""A failing model, through the doors a client uses: the same failure has the same code in a stream
and in JSON, a dropped provider connection says so, a fallback answers while nothing was sent (its
reply stored, priced and replayed as its own), and litellm prints nothing outside the log."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sqlalchemy import select

from orrery.agents.attempts import with_fallbacks
from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import Message
from tests.support.serving import serving
from tests.support.upstream import CLIENTS, client_model, fake_provider

JSON = {"Accept": "application/json"}


@pytest.fixture
async def api(settings: Settings, demo: Any) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    """The app (its model swapped per test) and a client. The summary refresh is off: it would call
    the same model in the background once the demo's summary is older than its interval (a run that
    lasts longer than that on a busy machine), and these tests count the model's calls per turn."""
    app = create_app(settings.model_copy(update={"pattern_refresh_minutes": 0}))
    async with serving(app, demo.api_key) as client:
        yield app, client


async def _session(client: httpx.AsyncClient, demo: Any) -> str:
    made = await client.post("/v1/sessions", json={"project_id": str(demo.project_id)})
    return str(made.json()["id"])


def _sse_error(text: str) -> dict[str, Any]:
    blocks = [b for b in text.strip().split("\n\n") if b.startswith("event: error")]
    return dict(json.loads(blocks[-1].split("\n")[1].removeprefix("data: ")))


async def _hang(messages: list[ModelMessage], info: AgentInfo) -> Any:
    await asyncio.sleep(30)
    yield "never"


async def test_a_timeout_has_the_same_code_in_a_stream_and_in_json(
    api: tuple[Any, httpx.AsyncClient], demo: Any
) -> None:
    app, client = api
    slow = with_fallbacks([FunctionModel(stream_function=_hang, model_name="slow")], 0.3)  # timed, 0.3 s
    app.state.orchestrator.model_factory = lambda _n, _s: slow
    sid = await _session(client, demo)
    streamed = _sse_error((await client.post(f"/v1/sessions/{sid}/messages", json={"content": "a"})).text)
    answered = await client.post(f"/v1/sessions/{sid}/messages", json={"content": "b"}, headers=JSON)
    assert streamed["code"] == "model_timeout" and answered.status_code == 502
    assert answered.json()["error"]["code"] == "model_timeout"
    assert (
        answered.json()["error"]["message"]
        == streamed["message"]
        == "the model slow did not answer within 0.3 s"
    )
    body = {"model": "orrery", "messages": [{"role": "user", "content": "c"}], "user": "timeouts"}
    openai_json = await client.post("/v1/chat/completions", json=body)
    assert openai_json.status_code == 502 and openai_json.json()["error"]["code"] == "model_timeout"
    openai_stream = await client.post("/v1/chat/completions", json={**body, "stream": True})
    [error] = [json.loads(line[6:]) for line in openai_stream.text.splitlines() if '"error"' in line]
    assert error["error"]["code"] == "model_timeout"


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_dropped_provider_stream_says_the_connection_was_lost_and_prints_no_banner(
    api: tuple[Any, httpx.AsyncClient], demo: Any, capfd: pytest.CaptureFixture[str], client: str
) -> None:
    import litellm

    app, client = api
    litellm.suppress_debug_info = False  # as litellm starts: its first failure would print banners
    with fake_provider() as (provider, base):
        provider.mode = "drop"
        model = client_model(client, "openai/fake-model", base)
        app.state.orchestrator.model_factory = lambda _n, _s: model
        sid = await _session(client, demo)
        failed = await client.post(f"/v1/sessions/{sid}/messages", json={"content": "hi"}, headers=JSON)
    assert failed.status_code == 502
    assert failed.json()["error"] == {
        "code": "model_error",
        "message": "the connection to the model provider was lost; retry shortly",
        "details": {"retry": True, "code": "model_error"},
    }
    printed = capfd.readouterr()
    assert "Give Feedback" not in printed.out + printed.err and "\033[" not in printed.out + printed.err


@pytest.mark.parametrize("clients", [("direct", "direct"), ("litellm", "litellm")])
async def test_a_fallback_answers_when_the_first_stream_drops_before_any_text(
    api: tuple[Any, httpx.AsyncClient], demo: Any, clients: tuple[str, str]
) -> None:
    app, client = api
    with fake_provider() as (provider, base):
        provider.model_modes = {"fake-model": "drop"}
        chain = with_fallbacks(
            [
                client_model(client, f"openai/{name}", base)
                for client, name in zip(clients, ("fake-model", "fallback-model"), strict=True)
            ],
            60,
        )
        app.state.orchestrator.model_factory = lambda _n, _s: chain
        sid = await _session(client, demo)
        answered = await client.post(f"/v1/sessions/{sid}/messages", json={"content": "hi"})
        asked = [r["model"] for r in provider.requests]
        provider.model_modes = {}
        first = await client.post(f"/v1/sessions/{sid}/messages", json={"content": "again"}, headers=JSON)
    assert asked == ["fake-model", "fallback-model"]
    assert '"delta": "echo: hi"' in answered.text and "event: error" not in answered.text
    [done] = [b for b in answered.text.split("\n\n") if b.startswith("event: done")]
    assert json.loads(done.split("\n")[1].removeprefix("data: "))["model"] == "openai/fallback-model"
    assert first.json()["model"] == "openai/fake-model"  # the response names the model that answered


FIRST, FALLBACK = "openai/gpt-4o", "openai/gpt-4o-mini"
"""Two litellm ids with different prices in litellm's local cost map."""


def _price(model: str, message: Message) -> float:
    import litellm

    prompt, completion = litellm.cost_per_token(
        model=model, prompt_tokens=message.prompt_tokens, completion_tokens=message.completion_tokens
    )
    return float(prompt) + float(completion)


@pytest.mark.parametrize("clients", [("direct", "litellm"), ("litellm", "direct")])
async def test_a_fallbacks_reply_is_stored_priced_and_replayed_with_its_model(
    api: tuple[Any, httpx.AsyncClient], demo: Any, db: Database, clients: tuple[str, str]
) -> None:
    """A chain mixing both clients: the direct client's failure falls back to litellm, and back."""
    app, client = api
    with fake_provider() as (provider, base):
        provider.model_modes = {"gpt-4o": "drop"}  # the first model fails; its fallback answers
        chain = with_fallbacks(
            [client_model(c, m, base) for c, m in zip(clients, (FIRST, FALLBACK), strict=True)], 60
        )
        app.state.orchestrator.model_factory = lambda _n, _s: chain
        sid = await _session(client, demo)
        turn = {"json": {"content": "hi"}, "headers": {**JSON, "Idempotency-Key": "turn-1"}}
        answered = await client.post(f"/v1/sessions/{sid}/messages", **turn)
        replayed = await client.post(f"/v1/sessions/{sid}/messages", **turn)
        body = {"model": "orrery", "messages": [{"role": "user", "content": "more"}]}
        openai = {"json": body, "headers": {"X-Orrery-Session": sid, "Idempotency-Key": "turn-2"}}
        completion = await client.post("/v1/chat/completions", **openai)
        completion_again = await client.post("/v1/chat/completions", **openai)
        streamed = {"json": {**body, "stream": True}, "headers": openai["headers"]}
        streamed_again = await client.post("/v1/chat/completions", **streamed)
        keyed = {"X-Orrery-Session": sid, "Idempotency-Key": "turn-3"}
        responses = {"json": {"model": "orrery", "input": "last"}, "headers": keyed}
        response = await client.post("/v1/responses", **responses)
        response_again = await client.post("/v1/responses", **responses)
        asked = [r["model"] for r in provider.requests]
    assert asked == ["gpt-4o", "gpt-4o-mini"] * 3  # each turn ran once; the replays called no model
    assert answered.json()["model"] == replayed.json()["model"] == FALLBACK
    assert replayed.json()["replayed"] is True
    assert completion.json()["model"] == completion_again.json()["model"] == FALLBACK
    chunks = [json.loads(line[6:]) for line in streamed_again.text.splitlines() if line.startswith("data: {")]
    assert chunks[-1]["model"] == FALLBACK and chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert response.json()["model"] == response_again.json()["model"] == FALLBACK
    shown = (await client.get(f"/v1/sessions/{sid}")).json()["messages"]
    assert [m["model"] for m in shown] == [None, FALLBACK] * 3
    async with db.sessions() as s:
        query = select(Message).where(Message.session_id == uuid.UUID(sid), Message.role == "assistant")
        replies = (await s.execute(query)).scalars().all()
    assert [r.model for r in replies] == [FALLBACK] * 3
    for reply in replies:  # priced as the fallback that answered, not as the first model
        assert reply.cost_usd == pytest.approx(_price(FALLBACK, reply)) and reply.cost_usd > 0
        assert reply.cost_usd != pytest.approx(_price(FIRST, reply))
