"""The Vercel AI SDK door: `regenerate()` keeps the server's history in step with the client's, failed
tools stream as `tool-output-error`, a failing model as an `error` chunk; every chunk parses as
pydantic-ai's Vercel types."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.ui.vercel_ai import response_types as rt

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
