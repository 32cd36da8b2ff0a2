"""What an OpenAI-door caller asks reaches a real provider (a fake OpenAI-compatible server on
loopback), on both clients of an `openai/...` model: `response_format` and the sampling settings in
the provider's request body (capped by the operator's limit), the caller's instructions in its
system message, the provider's JSON validated against the schema; and a provider's 429 answered as
a 429 with `Retry-After` on every door (issue 50 §2, §3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from pydantic import BaseModel

from tests.api.live import LiveServer
from tests.support.upstream import CLIENTS, FakeProvider, client_model, fake_provider


class Answer(BaseModel):
    answer: str


@pytest.fixture
def provider() -> Iterator[tuple[FakeProvider, str]]:
    with fake_provider() as served:
        yield served


def _on_provider(live: LiveServer, client: str, base: str) -> openai.AsyncOpenAI:
    model = client_model(client, "openai/fake-model", base)
    live.app.state.orchestrator.model_factory = lambda _n, _s: model
    return openai.AsyncOpenAI(base_url=live.base_url, api_key=live.app.state.demo_key, max_retries=0)


@pytest.fixture
def keyed(live: LiveServer, demo: Any) -> LiveServer:
    live.app.state.demo_key = demo.api_key
    return live


@pytest.mark.parametrize("client", CLIENTS)
async def test_format_and_settings_reach_the_provider_and_its_json_is_checked(
    keyed: LiveServer, provider: tuple[FakeProvider, str], client: str
) -> None:
    fake, base = provider
    fake.mode = "json"
    orrery = _on_provider(keyed, client, base)
    messages: Any = [
        {"role": "system", "content": "Answer as a pirate."},
        {"role": "user", "content": "Where is the treasure?"},
    ]
    parsed = await orrery.chat.completions.parse(
        model="orrery",
        messages=messages,
        response_format=Answer,
        temperature=0.2,
        top_p=0.9,
        max_tokens=999_999,
        stop=["END"],
        seed=7,
    )
    assert parsed.choices[0].message.parsed == Answer(answer="echo: Where is the treasure?")
    sent = fake.requests[-1]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"]["properties"] == {
        "answer": {"title": "Answer", "type": "string"}
    }
    assert sent["temperature"] == 0.2 and sent["top_p"] == 0.9 and sent["seed"] == 7
    assert sent["stop"] == ["END"]
    assert (sent.get("max_tokens") or sent.get("max_completion_tokens")) == 4096  # the operator's cap
    assert "Answer as a pirate." in sent["messages"][0]["content"]
    fake.mode = "echo"  # plain text where the schema asked for JSON: refused, never returned
    with pytest.raises(openai.APIStatusError) as caught:
        await orrery.responses.parse(model="orrery", input="Where is the map?", text_format=Answer)
    assert caught.value.status_code == 502 and caught.value.code == "invalid_output"


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_provider_429_is_a_429_with_retry_after_on_every_door(
    keyed: LiveServer, provider: tuple[FakeProvider, str], client: str
) -> None:
    fake, base = provider
    fake.mode = "rate_limited"
    orrery = _on_provider(keyed, client, base)
    with pytest.raises(openai.RateLimitError) as chat:
        await orrery.chat.completions.create(model="orrery", messages=[{"role": "user", "content": "a"}])
    assert chat.value.code == "rate_limited"
    assert chat.value.response.headers["retry-after"] == "7"  # the provider's own wait
    with pytest.raises(openai.RateLimitError) as responses:
        await orrery.responses.create(model="orrery", input="b")
    assert responses.value.response.headers["retry-after"]
    streamed = await orrery.responses.create(model="orrery", input="c", stream=True)
    last = [e async for e in streamed][-1]
    assert last.type == "response.failed" and last.response.error is not None
    assert last.response.error.code == "rate_limited"  # type: ignore[comparison-overlap]
    headers = {"Authorization": f"Bearer {keyed.app.state.demo_key}", "Accept": "application/json"}
    async with httpx.AsyncClient(base_url=keyed.base_url, headers=headers, timeout=60) as http:
        sid = (await http.post("/sessions", json={})).json()["id"]
        native = await http.post(f"/sessions/{sid}/messages", json={"content": "d"})
        assert native.status_code == 429 and native.headers["retry-after"]
        assert native.json()["error"]["code"] == "rate_limited"
        stream = await http.post(
            f"/sessions/{sid}/messages", json={"content": "e"}, headers={"Accept": "text/event-stream"}
        )
    errors = [
        json.loads(line[6:])
        for line in stream.text.splitlines()
        if line.startswith("data: ") and "rate_limited" in line
    ]
    assert errors and errors[-1]["code"] == "rate_limited"
