"""The Vercel AI SDK door: `regenerate()` keeps the server's history in step with the client's, failed
tools stream as `tool-output-error`, a failing model as an `error` chunk; `start` announces the id the
reply is stored under, reloading gives UIMessages with those ids, `resumeStream()`'s GET delivers a
running turn's reply (or 204); every chunk parses as pydantic-ai's Vercel types."""

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
from pydantic_ai.ui.vercel_ai import response_types as rt
from pydantic_ai.ui.vercel_ai.request_types import UIMessage

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from tests.support.models import calls, streaming

CHUNKS = {
    cls.model_fields["type"].default: cls
    for cls in vars(rt).values()
    if isinstance(cls, type) and issubclass(cls, rt.BaseChunk) and "type" in cls.model_fields
}


@pytest.fixture
async def ctx(db: Database, settings: Settings, demo: Any) -> AsyncIterator[dict[str, Any]]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://orrery",
            headers={"Authorization": f"Bearer {demo.api_key}"},
        )
        async with client:
            sid = (
                await client.post("/v1/sessions", json={"project_id": str(demo.project_id), "agent": "coach"})
            ).json()["id"]
            yield {"api": client, "app": app, "sid": sid}


def _chunks(body: str) -> list[rt.BaseChunk]:
    lines = [line.removeprefix("data: ") for line in body.split("\n\n") if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [CHUNKS[json.loads(line)["type"]].model_validate_json(line) for line in lines[:-1]]


def _ui(role: str, text: str, n: int) -> dict[str, Any]:
    return {"id": f"m{n}", "role": role, "parts": [{"type": "text", "text": text}]}


async def _send(api: httpx.AsyncClient, sid: str, body: dict[str, Any]) -> list[rt.BaseChunk]:
    response = await api.post(f"/v1/sessions/{sid}/chat", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    return _chunks(response.text)


def _reply(chunks: list[rt.BaseChunk]) -> str:
    return "".join(c.delta for c in chunks if isinstance(c, rt.TextDeltaChunk))


async def test_regenerate_does_not_duplicate_the_user_turn(ctx: dict[str, Any]) -> None:
    api, sid = ctx["api"], ctx["sid"]
    client: list[dict[str, Any]] = [_ui("user", "Plan my week", 0)]
    first = await _send(api, sid, {"trigger": "submit-message", "id": "c", "messages": client})
    client += [_ui("assistant", _reply(first), 1), _ui("user", "How does overage billing work?", 2)]
    second = await _send(api, sid, {"trigger": "submit-message", "id": "c", "messages": client})
    before = (await api.get(f"/v1/sessions/{sid}")).json()["messages"]
    assert len(before) == 4
    body = {"trigger": "regenerate-message", "id": "c", "messages": client, "messageId": "m3"}
    again = await _send(api, sid, body)
    after = (await api.get(f"/v1/sessions/{sid}")).json()["messages"]
    assert len(after) == len(client) + 1 == 4
    assert [m["content"] for m in after if m["role"] == "user"] == [
        "Plan my week",
        "How does overage billing work?",
    ]
    assert after[:3] == before[:3] and after[3]["created_at"] >= before[3]["created_at"]
    assert _reply(again) == _reply(second) == after[3]["content"]
    first_only = {"trigger": "regenerate-message", "id": "c", "messages": client[:1]}
    await _send(api, sid, first_only)
    assert len((await api.get(f"/v1/sessions/{sid}")).json()["messages"]) == 2
    nothing = {"trigger": "regenerate-message", "id": "c", "messages": client * 3}
    assert (await api.post(f"/v1/sessions/{sid}/chat", json=nothing)).status_code == 422


async def test_failed_tool_is_tool_output_error(ctx: dict[str, Any]) -> None:
    api, sid, app = ctx["api"], ctx["sid"], ctx["app"]
    model = calls("get_entry", {"code": "NOPE-999"})
    app.state.orchestrator.model_factory = lambda _n, _s: streaming(model.function)
    body = {"trigger": "submit-message", "id": "c", "messages": [_ui("user", "Read NOPE-999", 0)]}
    chunks = await _send(api, sid, body)
    kinds = [c.type for c in chunks]
    assert kinds[0] == "start" and kinds[-1] == "finish"
    assert "tool-input-available" in kinds and "tool-output-available" not in kinds
    failed = next(c for c in chunks if isinstance(c, rt.ToolOutputErrorChunk))
    assert "NOPE-999" in failed.error_text
    assert "TOOL SAID" in _reply(chunks)


async def test_model_failure_is_an_error_chunk(ctx: dict[str, Any]) -> None:
    api, sid, app = ctx["api"], ctx["sid"], ctx["app"]

    async def fail(messages: list[ModelMessage], info: AgentInfo) -> Any:
        raise RuntimeError("provider is down")
        yield ""  # pragma: no cover - makes this an async generator

    app.state.orchestrator.model_factory = lambda _n, _s: FunctionModel(stream_function=fail)
    body = {"trigger": "submit-message", "id": "c", "messages": [_ui("user", "Plan my week", 0)]}
    chunks = await _send(api, sid, body)
    errors = [c for c in chunks if isinstance(c, rt.ErrorChunk)]
    assert len(errors) == 1 and errors[0].error_text == "the model failed; retry shortly"
    assert not _reply(chunks)
    assert [m["role"] for m in (await api.get(f"/v1/sessions/{sid}")).json()["messages"]] == ["user"]


async def test_start_message_id_is_the_stored_id_and_reload_gives_ui_messages(ctx: dict[str, Any]) -> None:
    api, sid = ctx["api"], ctx["sid"]
    body = {"trigger": "submit-message", "id": "c", "messages": [_ui("user", "Plan my week", 0)]}
    response = await api.post(f"/v1/sessions/{sid}/chat", json=body)
    assert response.headers["cache-control"] == "no-cache" and response.headers["x-accel-buffering"] == "no"
    chunks = _chunks(response.text)
    start = chunks[0]
    finish = next(c for c in chunks if isinstance(c, rt.FinishChunk))
    assert isinstance(start, rt.StartChunk) and start.message_id and finish.finish_reason == "stop"
    assert json.loads(response.text.split("\n\n")[0].removeprefix("data: "))["messageId"] == start.message_id
    reloaded = (await api.get(f"/v1/sessions/{sid}/chat")).json()
    messages = [UIMessage.model_validate(m) for m in reloaded]
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].id == start.message_id  # the client's streamed message and the stored one match
    assert messages[1].parts[-1].text == _reply(chunks)  # type: ignore[union-attr]
    stored = (await api.get(f"/v1/sessions/{sid}")).json()["messages"]
    assert messages[0].parts[-1].text == stored[0]["content"] == "Plan my week"  # type: ignore[union-attr]


async def test_resume_stream_is_204_when_idle_and_the_reply_when_a_turn_runs(ctx: dict[str, Any]) -> None:
    api, sid, app = ctx["api"], ctx["sid"], ctx["app"]
    assert (await api.get(f"/v1/sessions/{sid}/chat/stream")).status_code == 204
    assert (await api.get(f"/v1/sessions/{uuid.uuid4()}/chat/stream")).status_code == 404
    # the AI SDK's default resume URL, `{api}/{chatId}/stream`, answers the same
    assert (await api.get(f"/v1/sessions/{sid}/chat/client-chat-1/stream")).status_code == 204
    assert (await api.get(f"/v1/sessions/{uuid.uuid4()}/chat/c/stream")).status_code == 404
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> Any:
        started.set()
        await release.wait()
        yield "All done "
        yield "for the week."

    app.state.orchestrator.model_factory = lambda _n, _s: FunctionModel(stream_function=slow)
    body = {"trigger": "submit-message", "id": "c", "messages": [_ui("user", "Plan my week", 0)]}
    locks = app.state.orchestrator.locks
    live, seen_live = locks.live, asyncio.Event()

    async def spied_live(session_id: uuid.UUID) -> bool:
        running = await live(session_id)
        if running:
            seen_live.set()
        return running

    locks.live = spied_live
    turn = asyncio.create_task(api.post(f"/v1/sessions/{sid}/chat", json=body))
    await started.wait()  # the turn runs: the client reloads and calls resumeStream()
    resumed = asyncio.create_task(api.get(f"/v1/sessions/{sid}/chat/stream"))
    await seen_live.wait()  # the resume saw the running turn (else a slow machine answers 204)
    release.set()
    original, again = await turn, await resumed
    assert again.status_code == 200 and again.headers["x-accel-buffering"] == "no"
    first, second = _chunks(original.text), _chunks(again.text)
    assert _reply(second) == _reply(first) == "All done for the week."
    assert second[0].message_id == first[0].message_id  # type: ignore[attr-defined]
    assert next(c for c in second if isinstance(c, rt.FinishChunk)).finish_reason == "stop"
    assert (await api.get(f"/v1/sessions/{sid}/chat/stream")).status_code == 204
