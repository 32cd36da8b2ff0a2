"""A fake OpenAI-compatible model provider on loopback, for server processes started by tests.

`mode` says how it answers `POST /v1/chat/completions`: `echo` (streamed or not, `echo: <last user
text>`), `json` (the same as `{"answer": ...}`), `fail` (HTTP 500 asking for a retry after 1 ms,
once the `gate` opens), `hang` (waits until the mode changes), `drop` (a stream that opens, sends
the assistant's empty first chunk, then loses its connection), `unauthorized` (HTTP 401),
`rate_limited` (HTTP 429 with `retry-after: 7`), `error_event` (a 200 stream whose second event is
an `error`, as vLLM-style servers report a failure mid-stream), or `script` (the assistant message
`script(body)` returns, text and/or `tool_calls`, streamed or not: a model that calls tools).
Requests for `model_modes[model]` get that mode instead (a fallback model answering while the first
fails).
Every request body is kept in `requests`, so tests count upstream calls and read what the model
was given. A server process reaches it with `LITELLM_API_BASE` (see `provider_env`), or with
`OPENAI_BASE_URL`; `client_model` builds an `openai/...` model on either client pointed at it."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

if TYPE_CHECKING:
    from pydantic_ai.models import Model

CLIENTS = ("direct", "litellm")
"""The two clients of an `openai/...` model: Orrery's direct OpenAI client and litellm."""
USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
UNAUTHORIZED = {
    "error": {
        "message": "Incorrect API key provided: sk-wrong.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
}

RATE_LIMITED = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
OVERLOADED = {"error": {"message": "the engine is overloaded", "type": "server_error", "code": 503}}


class FakeProvider:
    """The provider's state: how it answers now, and what it was asked."""

    def __init__(self) -> None:
        self.mode = "echo"
        self.model_modes: dict[str, str] = {}
        self.gate = threading.Event()
        self.gate.set()
        self.requests: list[dict[str, Any]] = []
        self.script: Any = None
        """`script` mode: the request body -> the assistant message (`content`, `tool_calls`)."""
        self.peers: list[int | None] = []
        """Each request's client port: one per connection (a kept-alive connection repeats it)."""
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self.complete)

    async def called(self, more_than: int, limit: float = 120) -> None:
        """Wait (at most `limit` seconds: a bound, not a timing assertion) until the provider has
        received more than `more_than` requests."""
        async with asyncio.timeout(limit):
            while len(self.requests) <= more_than:  # noqa: ASYNC110 - appended by the server's thread
                await asyncio.sleep(0.05)

    async def complete(self, request: Request) -> Any:
        body = await request.json()
        self.requests.append(body)
        self.peers.append(request.client.port if request.client else None)
        while self.mode == "hang":  # noqa: ASYNC110 - set from the test's thread
            await asyncio.sleep(0.05)
        mode = self.model_modes.get(body["model"], self.mode)
        if mode == "unauthorized":
            return JSONResponse(UNAUTHORIZED, status_code=401)
        if mode == "rate_limited":
            return JSONResponse(RATE_LIMITED, status_code=429, headers={"retry-after": "7"})
        if mode == "drop":
            return StreamingResponse(_dropped(body["model"]), media_type="text/event-stream")
        if mode == "error_event":
            failed = iter([next(_stream(body["model"], "")), f"data: {json.dumps(OVERLOADED)}\n\n"])
            return StreamingResponse(failed, media_type="text/event-stream")
        if mode == "fail":
            while not self.gate.is_set():  # noqa: ASYNC110 - a thread's event
                await asyncio.sleep(0.05)
            # `retry-after-ms`: the OpenAI SDK's clients retry at once instead of backing off ~1.5 s
            # per failed turn; they retry just as often
            return JSONResponse(
                {"error": {"message": "try later", "type": "server_error"}},
                status_code=500,
                headers={"retry-after-ms": "1"},
            )
        if mode == "script":
            return _scripted(body, self.script(body))
        text = f"echo: {_text(body['messages'][-1])}"
        if mode == "json":  # a JSON object, as a provider honouring `response_format` answers
            text = json.dumps({"answer": text})
        if body.get("stream"):
            return StreamingResponse(_stream(body["model"], text), media_type="text/event-stream")
        message = {"role": "assistant", "content": text}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return {"id": "c1", "object": "chat.completion", "created": 1, "model": body["model"]} | {
            "usage": USAGE,
            "choices": [choice],
        }


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content)
    return str(content)


def _stream(model: str, text: str) -> Iterator[str]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        data = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [choice],
        }
        return f"data: {json.dumps(data)}\n\n"

    yield chunk({"role": "assistant", "content": text})
    yield chunk({}, "stop")
    final = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": model, "choices": []}
    yield f"data: {json.dumps(final | {'usage': USAGE})}\n\n"
    yield "data: [DONE]\n\n"


def _scripted(body: dict[str, Any], message: dict[str, Any]) -> Any:
    """The scripted assistant message, as a completion or as a stream of chunks."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    if not body.get("stream"):
        choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        return {"id": "c1", "object": "chat.completion", "created": 1, "model": body["model"]} | {
            "usage": USAGE,
            "choices": [choice],
        }

    def chunks() -> Iterator[str]:
        head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": body["model"]}
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        yield f"data: {json.dumps(head | {'choices': [{'index': 0, 'delta': delta}]})}\n\n"
        for index, call in enumerate(message.get("tool_calls") or []):
            piece = {"tool_calls": [{"index": index, **call}]}
            yield f"data: {json.dumps(head | {'choices': [{'index': 0, 'delta': piece}]})}\n\n"
        end = {"index": 0, "delta": {}, "finish_reason": finish}
        yield f"data: {json.dumps(head | {'choices': [end]})}\n\n"
        yield f"data: {json.dumps(head | {'choices': [], 'usage': USAGE})}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(chunks(), media_type="text/event-stream")


def _dropped(model: str) -> Iterator[str]:
    """The first chunk (role, no text), then the connection ends mid-body (the server aborts it)."""
    yield next(_stream(model, ""))
    raise ConnectionResetError("the fake provider dropped the stream")


@contextmanager
def fake_provider() -> Iterator[tuple[FakeProvider, str]]:
    """The provider served on a free loopback port (in a thread); yields it and its `/v1` base URL."""
    provider = FakeProvider()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(provider.app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(600):  # a bound on waiting for the thread to listen
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield provider, f"http://127.0.0.1:{port}/v1"
    finally:
        provider.mode = "echo"
        provider.gate.set()
        server.should_exit = True
        thread.join(timeout=10)


def provider_env(base: str, client: str = "proxy") -> dict[str, str]:
    """A server process's environment for the fake provider: as a litellm proxy (`LITELLM_API_BASE`,
    called by Orrery's direct client), or as OpenAI's API (`OPENAI_BASE_URL`) through the `direct`
    client or `litellm` (`ORRERY_MODEL_CLIENT=litellm`)."""
    env = {
        "ORRERY_MODEL": "openai/fake-model",
        "ORRERY_MODEL_TIMEOUT_SECONDS": "120",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    if client == "proxy":
        return env | {"LITELLM_API_BASE": base, "LITELLM_API_KEY": "sk-test"}
    choice = "litellm" if client == "litellm" else "auto"
    return env | {"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-test", "ORRERY_MODEL_CLIENT": choice}


def client_model(
    client: str,
    name: str,
    base: str,
    *,
    api_key: str = "sk-test",
    num_retries: int = 0,
    timeout: float = 60.0,
) -> Model:
    """`name` (an `openai/...` id) on one client, pointed at the fake provider's `base`."""
    if client == "direct":
        from orrery.agents.openai_model import OpenAIModel

        sent = name.split("/", 1)[1]
        return OpenAIModel(
            name, sent_name=sent, base_url=base, api_key=api_key, num_retries=num_retries, timeout=timeout
        )
    from orrery.agents.litellm_model import LiteLLMModel

    return LiteLLMModel(name, api_base=base, api_key=api_key, num_retries=num_retries, timeout=timeout)
