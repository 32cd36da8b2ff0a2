"""Orrery's direct OpenAI client sends what litellm sends and fails as litellm does.

The same requests go through both clients of an `openai/...` model to one fake provider on loopback,
which keeps every body: they must be equal (litellm's base URL and key variables, its parameter
renames). Errors read the same: a refused or missing key names OPENAI_API_KEY, an error event inside
a stream is the SDK's `APIError`. `agents.protocol` picks the client per model; a server whose models
are all direct never imports litellm (a fresh interpreter shows it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from orrery.agents.attempts import TimedModel
from orrery.agents.credentials import ProviderCredentialsError
from orrery.agents.litellm_model import LiteLLMModel
from orrery.agents.models import build_model
from orrery.agents.openai_model import OpenAIModel
from orrery.agents.protocol import client_for
from orrery.config import Settings
from tests.support.upstream import CLIENTS, FakeProvider, client_model, fake_provider

TOOL = ToolDefinition(
    name="search_knowledge",
    description="Search the knowledge base.",
    parameters_json_schema={
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
)
HISTORY: list[ModelMessage] = [
    ModelRequest(parts=[UserPromptPart("What is open?")], instructions="Be brief."),
    ModelResponse(parts=[ToolCallPart("search_knowledge", '{"query": "open"}', tool_call_id="call_1")]),
    ModelRequest(parts=[ToolReturnPart("search_knowledge", "BR-012 is open", tool_call_id="call_1")]),
]


@pytest.fixture(scope="module")
def provider() -> Iterator[tuple[FakeProvider, str]]:
    with fake_provider() as found:
        yield found


@pytest.fixture(autouse=True)
def _fresh(provider: tuple[FakeProvider, str]) -> None:
    provider[0].mode, provider[0].requests[:], provider[0].peers[:] = "echo", [], []


def _settings(**overrides: Any) -> Settings:
    return Settings(_env_file=None, **overrides)  # type: ignore[call-arg]


async def _send(
    model: Model, *, stream: bool, settings: ModelSettings | None = None, text: bool = False
) -> None:
    params = ModelRequestParameters(function_tools=[TOOL], allow_text_output=text)
    if stream:
        async with model.request_stream(HISTORY, settings, params) as response:
            async for _ in response:
                pass
    else:
        await model.request(HISTORY, settings, params)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    ("model", "settings"),
    [
        ("openai/gpt-4o-mini", None),
        ("openai/gpt-4o-mini", {"max_tokens": 50, "temperature": 0.2, "top_p": 0.5, "seed": 3}),
        ("openai/gpt-4.1", {"stop_sequences": ["END"]}),
        ("openai/gpt-5-mini", {"max_tokens": 50}),  # litellm: max_completion_tokens
        ("openai/gpt-5-chat-latest", {"max_tokens": 50}),  # litellm: max_tokens, as sent
        ("openai/fake-model", {"max_tokens": 50}),
    ],
)
async def test_both_clients_send_the_same_body(
    provider: tuple[FakeProvider, str], model: str, settings: ModelSettings | None, stream: bool
) -> None:
    fake, base = provider
    for client in CLIENTS:
        await _send(client_model(client, model, base), stream=stream, settings=settings, text=bool(settings))
    direct, through_litellm = fake.requests
    assert json.dumps(direct, sort_keys=True) == json.dumps(through_litellm, sort_keys=True)
    assert direct["model"] == model.split("/", 1)[1] and direct["tools"][0]["function"]["name"] == TOOL.name


@pytest.mark.parametrize("variable", ["OPENAI_BASE_URL", "OPENAI_API_BASE"])
async def test_the_base_url_and_key_come_from_the_variables_litellm_reads(
    provider: tuple[FakeProvider, str], monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """`OPENAI_BASE_URL` first, then `OPENAI_API_BASE`; the key from `OPENAI_API_KEY`."""
    fake, base = provider
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.setenv(name, base if name == variable else "http://127.0.0.1:9/v1")
    if variable == "OPENAI_API_BASE":
        monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    for choice in ("auto", "litellm"):
        model = build_model("openai/gpt-4o-mini", _settings(model_client=choice))
        await _send(model, stream=True, text=True)
    assert len(fake.requests) == 2 and fake.requests[0] == fake.requests[1]


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_refused_key_names_the_variable_and_is_not_retried(
    provider: tuple[FakeProvider, str], client: str
) -> None:
    fake, base = provider
    fake.mode = "unauthorized"
    with pytest.raises(ProviderCredentialsError, match="refused the credentials: set OPENAI_API_KEY$"):
        await _send(client_model(client, "openai/fake-model", base, num_retries=2), stream=True)
    assert len(fake.requests) == 1


@pytest.mark.parametrize("choice", ["auto", "litellm"])
async def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch, choice: str) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: nothing may try
    model = build_model("openai/gpt-4o-mini", _settings(model_client=choice))
    with pytest.raises(ProviderCredentialsError, match="needs credentials: set OPENAI_API_KEY$"):
        await _send(model, stream=True)


async def test_an_error_event_inside_a_stream_is_the_sdks_api_error(
    provider: tuple[FakeProvider, str],
) -> None:
    fake, base = provider
    fake.mode = "error_event"
    with pytest.raises(openai.APIError, match="the engine is overloaded"):
        await _send(client_model("direct", "openai/fake-model", base), stream=True, text=True)


def test_each_model_runs_on_the_client_the_protocol_names() -> None:
    auto, forced = _settings(), _settings(model_client="litellm")
    proxied = _settings(litellm_api_base="http://127.0.0.1:4000")
    assert [client_for(m, auto) for m in ("openai/gpt-4o-mini", "openai/gpt-5-mini", "anthropic/claude")] == [
        "direct",
        "direct",
        "litellm",
    ]
    # models whose requests litellm rewrites (o-series, gpt-5.4+ to the Responses API) stay on litellm
    for rewritten in (
        "o3-mini",
        "o1",
        "gpt-5.4",
        "gpt-5-codex",
        "gpt-5-pro",
        "gpt-4o-search-preview",
        "gpt-6",
    ):
        assert client_for(f"openai/{rewritten}", auto) == "litellm", rewritten
    assert client_for("openai/gpt-4o-mini", forced) == "litellm"
    assert client_for("anthropic/claude", proxied) == "proxy"

    def chain(settings: Settings) -> list[Model]:
        built = build_model("openai/gpt-4o-mini", settings)
        timed = built.models if isinstance(built, FallbackModel) else [built]
        return [m.wrapped for m in timed if isinstance(m, TimedModel)]

    mixed = auto.model_copy(update={"model_fallbacks": "anthropic/claude-sonnet-4-5, openai/gpt-4.1"})
    assert [type(m) for m in chain(mixed)] == [OpenAIModel, LiteLLMModel, OpenAIModel]
    assert [type(m) for m in chain(forced)] == [LiteLLMModel]
    [through_proxy] = chain(proxied)
    assert isinstance(through_proxy, OpenAIModel) and through_proxy.system == "litellm"


NO_LITELLM = """
import asyncio, json, sys
from pydantic_ai import Agent
from orrery.agents.models import build_model
from orrery.config import Settings

async def main():
    agent = Agent(build_model("openai/gpt-4o-mini", Settings(_env_file=None)), instructions="Be brief.")
    async with agent.run_stream("hello") as run:
        streamed = await run.get_output()
    answered = (await agent.run("again")).output
    print(json.dumps([streamed, answered, "litellm" in sys.modules]))

asyncio.run(main())
"""


def test_a_direct_model_never_imports_litellm(provider: tuple[FakeProvider, str]) -> None:
    _, base = provider
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORRERY_", "OPENAI_", "LITELLM_API"))}
    env |= {"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-test"}
    out = subprocess.run(
        [sys.executable, "-c", NO_LITELLM], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.splitlines()[-1]) == ["echo: hello", "echo: again", False], out.stderr


WHOLE_TURN = """
import sys
from orrery.cli.commands import app
sys.argv = ["orrery", "chat", "--demo", "--once", "Hello"]
try:
    app()
finally:
    print("litellm imported:", "litellm" in sys.modules)
"""


def test_a_whole_turn_on_a_direct_model_never_imports_litellm(
    provider: tuple[FakeProvider, str], sqlite_demo_template: Path, tmp_path: Path
) -> None:
    """`orrery chat` checks the key, preloads the provider, runs the turn and prices the reply."""
    _, base = provider
    shutil.copy(sqlite_demo_template, tmp_path / "orrery.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORRERY_", "OPENAI_", "LITELLM_API"))}
    env |= {"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-test", "ORRERY_MODEL": "openai/gpt-4o-mini"}
    env |= {
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'orrery.db'}",
        "ORRERY_SECRET_KEY": "test-secret",
    }
    run = [sys.executable, "-c", WHOLE_TURN]
    out = subprocess.run(run, env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-2:] == ["echo: Hello", "litellm imported: False"], out.stderr


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_request_timeout_is_retried_then_raised(
    provider: tuple[FakeProvider, str], client: str
) -> None:
    """The client's own timeout (`ORRERY_MODEL_TIMEOUT_SECONDS` is the attempt's, around it): the
    SDK's `APITimeoutError` (litellm's `Timeout` is one), retried once, then raised."""
    fake, base = provider
    fake.mode = "hang"
    model = client_model(client, "openai/fake-model", base, num_retries=1, timeout=0.5)
    try:
        with pytest.raises(openai.APITimeoutError):
            await _send(model, stream=True)
        assert len(fake.requests) == 2
    finally:
        fake.mode = "echo"


async def test_a_proxy_is_called_directly_with_the_model_id_as_it_is(
    provider: tuple[FakeProvider, str],
) -> None:
    """`LITELLM_API_BASE`: the whole id goes to the proxy; a refused key names `LITELLM_API_KEY`."""
    fake, base = provider
    proxied = _settings(litellm_api_base=base, litellm_api_key="sk-proxy")
    await _send(build_model("anthropic/claude-sonnet-4-5", proxied), stream=True, text=True)
    assert fake.requests[-1]["model"] == "anthropic/claude-sonnet-4-5"
    fake.mode = "unauthorized"
    with pytest.raises(ProviderCredentialsError, match="refused the credentials: set LITELLM_API_KEY$"):
        await _send(build_model("openai/gpt-4o-mini", proxied), stream=False)
    assert len(fake.requests) == 2


async def test_inside_a_server_requests_share_a_session_and_fail_the_same(
    provider: tuple[FakeProvider, str],
) -> None:
    """A server's requests (`openai_http.pooled`, the app's lifespan) share one aiohttp session and
    its kept-alive connection (a stream is read to its end after `[DONE]`): the same body as a
    request outside; a dropped stream, an error event, a refused key and a timeout fail as they do
    outside; the session is closed when the server stops."""
    from orrery.agents import openai_http

    fake, base = provider
    await _send(client_model("direct", "openai/gpt-4o-mini", base), stream=True)
    async with openai_http.pooled():
        model = client_model("direct", "openai/gpt-4o-mini", base, num_retries=1, timeout=0.5)
        await _send(model, stream=True)
        outside, inside = fake.requests
        for _ in range(3):
            await _send(model, stream=True)
        assert len(set(fake.peers[1:])) == 1  # one connection for the four requests
        assert json.dumps(outside, sort_keys=True) == json.dumps(inside, sort_keys=True)
        pooled = openai_http.served_session()
        assert pooled is not None
        for mode, error in [
            ("drop", httpx.TransportError),  # httpx's, as attempts.py reads a dropped stream
            ("error_event", openai.APIError),
            ("unauthorized", ProviderCredentialsError),
            ("hang", openai.APITimeoutError),
        ]:
            fake.mode = mode
            with pytest.raises(error):
                await _send(model, stream=True)
            fake.mode = "echo"
        await _send(model, stream=False)
        assert openai_http.served_session() is pooled
    assert pooled.closed
