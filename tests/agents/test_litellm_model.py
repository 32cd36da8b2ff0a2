"""Both clients of a real model (Orrery's direct OpenAI client and the in-process litellm adapter)
against a fake OpenAI-compatible server on loopback (real HTTP): the same behaviour from each."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic_ai import Agent
from pydantic_ai.models import Model

from orrery.agents.litellm_model import LiteLLMModel
from orrery.agents.openai_model import OpenAIModel
from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import chat


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FakeOpenAI:
    """Answers like OpenAI: a tool call when tools are offered and the user says CALL, else an echo."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_next: int | None = None
        self.truncate_next = False
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self.complete)

    def _reply(self, body: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
        last = body["messages"][-1]
        if last["role"] == "user" and "CALL" in str(last["content"]) and body.get("tools"):
            return None, {
                "id": "call_1",
                "name": body["tools"][0]["function"]["name"],
                "arguments": '{"text": "hi"}',
            }
        return f"echo: {last['content']}", None

    async def complete(self, request: Request) -> Any:
        body = await request.json()
        self.requests.append(body)
        if self.fail_next:
            status, self.fail_next = self.fail_next, None
            return JSONResponse(
                {"error": {"message": "try later", "type": "server_error"}}, status_code=status
            )
        text, call = self._reply(body)
        usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if call:
                message["tool_calls"] = [
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["name"], "arguments": call["arguments"]},
                    }
                ]
            return {
                "id": "c1",
                "object": "chat.completion",
                "created": 1,
                "model": body["model"],
                "usage": usage,
                "choices": [
                    {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}
                ],
            }
        truncate, self.truncate_next = self.truncate_next, False
        return StreamingResponse(
            self._stream(body["model"], text, call, usage, truncate), media_type="text/event-stream"
        )

    def _stream(
        self,
        model: str,
        text: str | None,
        call: dict[str, Any] | None,
        usage: dict[str, Any],
        truncate: bool = False,
    ) -> Iterator[str]:
        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
            data = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            return f"data: {json.dumps(data)}\n\n"

        if text:
            for word in text.split(" "):
                yield chunk({"role": "assistant", "content": word + " "})
        if call:
            yield chunk(
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["name"], "arguments": ""},
                        }
                    ],
                }
            )
            for piece in (call["arguments"][:5], call["arguments"][5:]):
                yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        if truncate:  # the connection drops: no finish_reason, no usage
            yield "data: [DONE]\n\n"
            return
        yield chunk({}, "tool_calls" if call else "stop")
        final = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [],
            "usage": usage,
        }
        yield f"data: {json.dumps(final)}\n\n"
        yield "data: [DONE]\n\n"


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeOpenAI, str]]:
    server_app = FakeOpenAI()
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(server_app.app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(100):
        if server.started:
            break
        time.sleep(0.05)
    yield server_app, f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(timeout=5)


@pytest.fixture(params=["direct", "litellm"])
def client(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _model(client: str, base: str) -> Model:
    if client == "direct":
        return OpenAIModel(
            "openai/fake-model",
            sent_name="fake-model",
            base_url=base,
            api_key="sk-test",
            num_retries=0,
            timeout=10,
        )
    return LiteLLMModel("openai/fake-model", api_base=base, api_key="sk-test", num_retries=0, timeout=10)


def _agent(base: str, client: str = "litellm") -> Agent[None, str]:
    agent = Agent(_model(client, base), instructions="Be brief.")

    @agent.tool_plain
    def echo_tool(text: str) -> str:
        """Echo the text back.

        Args:
            text: What to echo.
        """
        return f"tool saw {text}"

    return agent


async def test_request_with_tool_call_round_trip(fake: tuple[FakeOpenAI, str], client: str) -> None:
    server, base = fake
    server.requests.clear()
    result = await _agent(base, client).run("please CALL the tool")
    assert result.output.startswith("echo: tool saw hi")
    first, second = server.requests
    assert first["messages"][0] == {"role": "system", "content": "Be brief."}
    assert first["tools"][0]["function"]["name"] == "echo_tool"
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "tool saw hi"}
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "echo_tool"
    assert result.usage.input_tokens == 22 and result.usage.output_tokens == 14


async def test_streaming_text_and_tool_calls(fake: tuple[FakeOpenAI, str], client: str) -> None:
    from pydantic_ai import AgentRunResultEvent
    from pydantic_ai.messages import FunctionToolCallEvent, PartDeltaEvent, PartStartEvent, TextPart

    server, base = fake
    server.requests.clear()
    deltas, calls, output = [], [], None
    async with _agent(base, client).run_stream_events("please CALL the tool") as events:
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                deltas.append(event.part.content)
            elif isinstance(event, PartDeltaEvent) and hasattr(event.delta, "content_delta"):
                deltas.append(event.delta.content_delta)
            elif isinstance(event, FunctionToolCallEvent):
                calls.append((event.part.tool_name, event.part.args_as_dict()))
            elif isinstance(event, AgentRunResultEvent):
                output = event.result.output
    assert calls == [("echo_tool", {"text": "hi"})]
    assert len(deltas) > 2 and "".join(deltas).strip() == "echo: tool saw hi"
    assert output is not None and output.strip() == "echo: tool saw hi"
    assert all(r.get("stream") for r in server.requests)


async def test_server_errors_surface_as_exceptions(fake: tuple[FakeOpenAI, str], client: str) -> None:
    server, base = fake
    server.fail_next = 500
    with pytest.raises(Exception, match=r"(?i)(500|server|try later)"):
        await _agent(base, client).run("hello")
    assert (await _agent(base, client).run("hello again")).output == "echo: hello again"


async def test_a_turn_whose_stream_ends_without_finish_reason_is_stored_truncated(
    fake: tuple[FakeOpenAI, str], db: Database, settings: Settings, demo: Any, client: str
) -> None:
    server, base = fake
    async with db.transaction() as s:
        sid = (await chat.create_session(s, demo.user_id, project_id=demo.project_id)).id
    model = _model(client, base)
    orch = Orchestrator(db, settings, lambda _n, _s: model)
    server.truncate_next = True
    cut = [e async for e in orch.turn(demo.user_id, sid, "hello there")]
    assert cut[-1].type == "done" and cut[-1].data["truncated"] is True
    whole = [e async for e in orch.turn(demo.user_id, sid, "and again")]
    assert whole[-1].type == "done" and whole[-1].data["truncated"] is False
    server.fail_next = 500
    failed = [e async for e in orch.turn(demo.user_id, sid, "once more")]
    assert failed[-1].type == "error" and failed[-1].data["code"] == "model_error"
    assert (
        "try later" not in failed[-1].data["message"] and "litellm" not in failed[-1].data["message"].lower()
    )
    async with db.sessions() as s:
        stored = await chat.list_messages(s, demo.user_id, sid)
    assert [(m.role, m.status) for m in stored] == [
        ("user", "complete"),
        ("assistant", "truncated"),
        ("user", "complete"),
        ("assistant", "complete"),
        ("user", "failed"),
    ]


async def test_a_stream_is_not_priced_by_counting_its_prompt_at_open(
    fake: tuple[FakeOpenAI, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """litellm would count the prompt with tiktoken to price a stream as it opens; Orrery prices the
    reply from its usage chunk, so no prompt is counted and the usage still arrives."""
    import litellm.cost_calculator

    from orrery.agents.litellm_model import _litellm

    _litellm()
    counted: list[Any] = []
    monkeypatch.setattr(litellm.cost_calculator, "token_counter", lambda **kw: counted.append(kw) or 1)
    _, base = fake
    async with _agent(base).run_stream("hello") as run:
        text = await run.get_output()
    assert text.strip().startswith("echo") and run.usage.input_tokens > 0
    assert counted == []
