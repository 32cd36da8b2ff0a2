"""Chat over HTTP: sessions, streamed turns (SSE), JSON turns, idempotent retries, context, and the
OpenAI-compatible endpoint driven by the real `openai` client against a live server."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database


def _events(body: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


async def _focused_session(api: httpx.AsyncClient, demo: Any) -> str:
    response = await api.post(
        "/v1/sessions",
        json={"project_id": str(demo.project_id), "focus": {"kind": "task", "id": str(demo.focus["task"])}},
    )
    assert response.status_code == 201
    return str(response.json()["id"])


async def test_streamed_turn_event_sequence(api: httpx.AsyncClient, demo: Any) -> None:
    sid = await _focused_session(api, demo)
    response = await api.post(
        f"/v1/sessions/{sid}/messages", json={"content": "What is this task blocked by?"}
    )
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = _events(response.text)
    kinds = [k for k, _ in events]
    assert kinds[:2] == ["agent", "context"] and kinds[-1] == "done"
    assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("text")
    assert events[0][1] == {"agent": "planner"}
    assert "Legal review of pricing terms" in events[-1][1]["reply"]
    session = (await api.get(f"/v1/sessions/{sid}")).json()
    assert [(m["seq"], m["role"], m["agent"]) for m in session["messages"]] == [
        (1, "user", None),
        (2, "assistant", "planner"),
    ]


async def test_json_turn_and_idempotent_retry(api: httpx.AsyncClient, demo: Any) -> None:
    sid = await _focused_session(api, demo)
    headers = {"Accept": "application/json", "Idempotency-Key": "turn-1"}
    first = await api.post(
        f"/v1/sessions/{sid}/messages", json={"content": "What plan is this in?"}, headers=headers
    )
    again = await api.post(
        f"/v1/sessions/{sid}/messages", json={"content": "What plan is this in?"}, headers=headers
    )
    assert first.status_code == again.status_code == 200
    assert again.json()["message_id"] == first.json()["message_id"] and again.json()["replayed"]
    assert "Launch marketing" in first.json()["reply"]
    assert (await api.get(f"/v1/sessions/{sid}")).json()["message_count"] == 2


async def test_patch_context_and_errors(api: httpx.AsyncClient, demo: Any) -> None:
    sid = await _focused_session(api, demo)
    patched = await api.patch(
        f"/v1/sessions/{sid}", json={"agent": "motivator", "scoping_strategy": "relevance"}
    )
    assert patched.json()["active_agent"] == "motivator" and patched.json()["scoping_strategy"] == "relevance"
    context = (await api.get(f"/v1/sessions/{sid}/context")).json()
    assert (
        context["system_prompt"].startswith("You are the **motivator**")
        and context["receipt"]["agent"] == "motivator"
    )
    cleared = await api.patch(f"/v1/sessions/{sid}", json={"clear_focus": True})
    assert cleared.json()["focus"] is None
    bad = await api.patch(f"/v1/sessions/{sid}", json={"scoping_strategy": "sideways"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid"
    empty = await api.post(f"/v1/sessions/{sid}/messages", json={"content": ""})
    assert empty.status_code == 422 and empty.json()["error"]["details"]
    missing = await api.get("/v1/sessions/00000000-0000-4000-8000-000000000000")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


async def test_another_users_session_is_not_found(
    api: httpx.AsyncClient, demo: Any, db: Database, settings: Settings
) -> None:
    sid = await _focused_session(api, demo)
    from orrery.repo import identity

    async with db.transaction() as s:
        eve = await identity.create_user(s, "eve@example.org", "Eve")
        _, key = await identity.issue_api_key(s, eve.id, "k", settings.secret_key)
    headers = {"Authorization": f"Bearer {key}"}
    for method, path, body in (
        ("GET", f"/v1/sessions/{sid}", None),
        ("GET", f"/v1/sessions/{sid}/context", None),
        ("PATCH", f"/v1/sessions/{sid}", {"agent": "coach"}),
        ("POST", f"/v1/sessions/{sid}/messages", {"content": "hi"}),
    ):
        response = await api.request(method, path, json=body, headers=headers)
        assert response.status_code == 404, (method, path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def live(settings: Settings, demo: Any) -> Iterator[str]:
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(timeout=10)


def test_openai_client_against_a_live_server(live: str, demo: Any) -> None:
    import openai

    client = openai.OpenAI(base_url=live, api_key=demo.api_key)
    cards = {m.id: m for m in client.models.list().data}
    assert "orrery/planner" in cards  # the offline model is said once, in each model's description
    assert "Offline model" in str(cards["orrery/planner"].model_extra.get("description"))
    reply = client.chat.completions.create(
        model="orrery/planner",
        user="script-1",
        messages=[{"role": "user", "content": "How does overage billing work?"}],
    )
    content = reply.choices[0].message.content or ""
    assert "BR-012" in content and "Offline model" not in content  # replies carry no disclaimer
    chunks = list(
        client.chat.completions.create(
            model="orrery",
            user="script-1",
            stream=True,
            messages=[{"role": "user", "content": "Any plan for today?"}],
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text and "Offline model" not in text and chunks[-1].choices[0].finish_reason == "stop"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="orrery/wizard", messages=[{"role": "user", "content": "x"}])


async def test_vercel_ai_stream_parsed_by_pydantic_ai_types(api: httpx.AsyncClient, demo: Any) -> None:
    from pydantic_ai.ui.vercel_ai import response_types as rt

    sid = await _focused_session(api, demo)
    body = {
        "trigger": "submit-message",
        "id": "chat-1",
        "messages": [
            {
                "id": "m0",
                "role": "user",
                "parts": [{"type": "text", "text": "ignored: the server owns history"}],
            },
            {"id": "m1", "role": "assistant", "parts": [{"type": "text", "text": "also ignored"}]},
            {
                "id": "m2",
                "role": "user",
                "parts": [{"type": "text", "text": "What is this task blocked by?"}],
            },
        ],
    }
    response = await api.post(f"/v1/sessions/{sid}/chat", json=body)
    assert response.status_code == 200 and response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    by_type = {
        cls.model_fields["type"].default: cls
        for cls in vars(rt).values()
        if isinstance(cls, type) and issubclass(cls, rt.BaseChunk) and "type" in cls.model_fields
    }
    lines = [line.removeprefix("data: ") for line in response.text.split("\n\n") if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    chunks = [by_type[json.loads(line)["type"]].model_validate_json(line) for line in lines[:-1]]
    kinds = [c.type for c in chunks]
    assert kinds[:2] == ["start", "start-step"] and kinds[-1] == "finish"
    assert "tool-input-available" in kinds and "tool-output-available" in kinds and "text-delta" in kinds
    text = "".join(c.delta for c in chunks if isinstance(c, rt.TextDeltaChunk))
    assert "Legal review of pricing terms" in text
    messages = (await api.get(f"/v1/sessions/{sid}")).json()["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["What is this task blocked by?"]
    bad = await api.post(
        f"/v1/sessions/{sid}/chat", json={"trigger": "submit-message", "id": "x", "messages": []}
    )
    assert bad.status_code == 422


async def test_sse_event_stream_snapshot(api: httpx.AsyncClient, demo: Any) -> None:
    """The exact shape of a streamed turn (volatile values replaced by their types), with the
    prompt's full text in the `context` event as `?context=full` asks."""
    sid = await _focused_session(api, demo)
    response = await api.post(
        f"/v1/sessions/{sid}/messages?context=full", json={"content": "What plan does this task belong to?"}
    )

    def shape(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: shape(v) for k, v in sorted(value.items())}
        if isinstance(value, list):
            return [shape(v) for v in value]
        return type(value).__name__

    events = _events(response.text)
    assert [kind for kind, _ in events if kind != "text"] == ["agent", "context", "done"]
    assert events[0][1] == {"agent": "planner"}
    context = dict(events[1][1])
    receipt = context.pop("receipt")  # the full receipt, as GET /v1/sessions/{id}/context returns it
    assert receipt["total_tokens"] == context["receipt_tokens"] and receipt["sections"]
    assert "Finalize pricing page" in context.pop("system_prompt")
    assert context.pop("messages")[-1] == {"role": "user", "content": "What plan does this task belong to?"}
    assert shape(context) == {
        # a question about the focus entity's own links: no knowledge packet
        "knowledge": {"confidence": "NoneType", "reason": "str", "receipt": "NoneType", "status": "str"},
        "receipt_tokens": "int",
        "strategy": "str",
    }
    assert all(set(data) == {"delta"} for kind, data in events if kind == "text")
    assert shape(events[-1][1]) == {
        "agent": "str",
        "handoff": "NoneType",
        "latency_ms": "int",
        "message_id": "str",
        "model": "str",
        "replayed": "bool",
        "reply": "str",
        "seq": "int",
        "tool_calls": [],
        "truncated": "bool",
        "usage": {"input_tokens": "int", "output_tokens": "int"},
    }


async def test_context_event_carries_a_digest_unless_the_full_text_is_asked_for(
    api: httpx.AsyncClient, demo: Any
) -> None:
    """By default the `context` event has the receipt and a digest of the prompt, not the prompt: the
    digest changes when the prompt does, and `GET .../context?at=SEQ` shows that turn's text."""
    sid = await _focused_session(api, demo)
    digests = []
    for question in ("What plan does this task belong to?", "And what is it blocked by?"):
        response = await api.post(f"/v1/sessions/{sid}/messages", json={"content": question})
        context = dict(_events(response.text))["context"]
        assert "system_prompt" not in context and "messages" not in context
        assert context["receipt"]["total_tokens"] == context["receipt_tokens"]
        digest = context["digest"]
        assert len(digest["sha256"]) == 64 and digest["system_prompt_chars"] > 0 and digest["messages"] >= 1
        digests.append(digest)
    assert digests[0]["sha256"] != digests[1]["sha256"] and digests[1]["messages"] > digests[0]["messages"]
    past = (await api.get(f"/v1/sessions/{sid}/context?at=1")).json()
    assert past["messages"][-1]["content"] == "What plan does this task belong to?"
