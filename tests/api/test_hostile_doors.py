"""The same unstorable inputs through every write of every door (REST, OpenAI, Vercel, the tool door,
MCP, the CLI, the web app), on both databases: a lone surrogate, a NUL, JSON 5,000 levels deep, and
fullwidth digits in an entry code. Each is refused with a 4xx (a tool error, a CLI exit code with a
message), nothing is stored, and every read of the touched objects still answers 200 (issue 42)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from mcp import Client
from sqlalchemy import func, select

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import ChatSession, CheckIn, Edge, Entity, KbCollection, KbEntry, Message
from orrery.deps import TurnDeps
from orrery.mcp_server import build_server
from tests.support.entrypoint import server_launcher
from tests.support.web import sign_in

BAD = {"surrogate": "x\ud800y", "nul": "a\x00b"}
DEEP = "[" * 5000 + "]" * 5000
TABLES = (ChatSession, CheckIn, Edge, Entity, KbCollection, KbEntry, Message)


@pytest.fixture
async def doors(db: Database, settings: Settings, demo: Any) -> AsyncIterator[dict[str, Any]]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)  # a crash counts as a 500
        auth = {"Authorization": f"Bearer {demo.api_key}"}
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://orrery", headers=auth) as api,
            httpx.AsyncClient(transport=transport, base_url="http://orrery") as web,
        ):
            assert (await sign_in(web, demo.api_key)).status_code == 303
            yield {"api": api, "web": web, "app": app, "demo": demo, "db": db}


async def _counts(db: Database) -> dict[str, int]:
    async with db.sessions() as s:
        return {
            t.__tablename__: int((await s.execute(select(func.count()).select_from(t))).scalar_one())
            for t in TABLES
        }


def _raw(value: Any) -> bytes:
    """JSON whose strings keep their lone surrogates as `\\ud800` escapes (what a client sends)."""
    return json.dumps(value).encode()


def _rest_writes(demo: Any, sid: str, collection: str, bad: str) -> list[tuple[str, str, Any]]:
    p, task = demo.project_id, demo.focus["task"]
    return [
        ("POST", f"/v1/projects/{p}/entities", {"kind": "task", "name": bad}),
        ("POST", f"/v1/projects/{p}/entities", {"kind": "task", "name": "ok", "props": {bad: 1}}),
        ("PATCH", f"/v1/entities/{task}", {"description": bad}),
        ("PATCH", f"/v1/entities/{task}", {"state": bad}),
        ("POST", "/v1/kb/entries", {"collection_id": collection, "code": "HX-1", "name": bad}),
        ("PATCH", f"/v1/projects/{p}/kb/entries/BR-012", {"correction": bad}),
        ("POST", f"/v1/projects/{p}/kb/collections", {"slug": "hx", "name": bad}),
        ("POST", "/v1/check-ins", {"note": bad}),
        ("POST", "/v1/me/facts", {"text": bad}),
        ("POST", "/v1/me/facts", {"text": "ok", "subject": bad}),
        ("POST", "/v1/sessions", {"title": bad}),
        ("PATCH", f"/v1/sessions/{sid}", {"title": bad}),
        ("POST", f"/v1/sessions/{sid}/messages", {"content": bad}),
        ("POST", f"/v1/sessions/{sid}/messages/1/edit", {"content": bad}),
        ("POST", "/v1/chat/completions", {"model": "orrery", "messages": [{"role": "user", "content": bad}]}),
        ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "user": bad}),
        ("POST", "/v1/responses", {"model": "orrery", "input": bad}),
        ("POST", "/v1/responses", {"model": "orrery", "input": "hi", "user": bad}),
        (
            "POST",
            f"/v1/sessions/{sid}/chat",
            {
                "trigger": "submit-message",
                "id": "c",
                "messages": [{"id": "m", "role": "user", "parts": [{"type": "text", "text": bad}]}],
            },
        ),
        (
            "POST",
            "/v1/tools/update_entry",
            {"project_id": str(p), "arguments": {"code": "BR-012", "correction": bad}},
        ),
        ("POST", "/v1/tools/get_entry", {"project_id": str(p), "arguments": {"code": bad}}),
        ("POST", "/v1/tools/search_knowledge", {"project_id": str(p), "arguments": {"query": bad}}),
        ("POST", "/v1/tools/update_entry", {"project_id": str(p), "arguments": {"code": "BR-012", bad: "x"}}),
    ]


def _deep_writes(demo: Any, sid: str) -> list[tuple[str, str, bytes]]:
    p = demo.project_id
    deep = DEEP.encode()
    return [
        (
            "POST",
            f"/v1/projects/{p}/entities",
            b'{"kind": "task", "name": "x", "props": {"a": ' + deep + b"}}",
        ),
        ("POST", f"/v1/sessions/{sid}/messages", b'{"content": ' + deep + b"}"),
        ("POST", "/v1/chat/completions", b'{"messages": ' + deep + b"}"),
        ("POST", f"/v1/sessions/{sid}/chat", b'{"messages": ' + deep + b"}"),
        ("POST", "/v1/tools/update_entry", b'{"arguments": {"code": "BR-012", "correction": ' + deep + b"}}"),
    ]


def _web_writes(sid: str, bad: str) -> list[tuple[str, dict[str, str]]]:
    return [
        ("/sessions", {"title": bad}),
        (f"/s/{sid}/rename", {"title": bad}),
        (f"/s/{sid}/knowledge", {"code": "BR-012", "correction": bad}),
        (f"/s/{sid}/say", {"content": bad}),
        (f"/s/{sid}/settings", {"strategy": bad}),
    ]


async def _reads(doors: dict[str, Any], sid: str) -> None:
    api, demo = doors["api"], doors["demo"]
    p = demo.project_id
    for path in (
        f"/v1/sessions/{sid}",
        f"/v1/entities/{demo.focus['task']}",
        f"/v1/projects/{p}/kb/entries/BR-012",
        f"/v1/projects/{p}/entities",
        "/v1/check-ins",
        "/v1/sessions",
        f"/v1/projects/{p}/kb/search?q=overage",
    ):
        assert (await api.get(path)).status_code == 200, path
    assert (await doors["web"].get(f"/s/{sid}")).status_code == 200


async def test_unstorable_input_is_refused_by_every_door(doors: dict[str, Any], db_url: str) -> None:
    api, web, demo, db = doors["api"], doors["web"], doors["demo"], doors["db"]
    sid = (await api.post("/v1/sessions", json={"project_id": str(demo.project_id)})).json()["id"]
    collection = (await api.get(f"/v1/projects/{demo.project_id}/kb/collections")).json()[0]["id"]
    page = await web.get(f"/s/{sid}")
    csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text).group(1)  # type: ignore[union-attr]
    entry = (await api.get(f"/v1/projects/{demo.project_id}/kb/entries/BR-012")).json()
    before = await _counts(db)
    outcomes: list[tuple[str, int]] = []
    headers = {"Content-Type": "application/json"}
    for bad in BAD.values():
        for method, path, body in _rest_writes(demo, sid, collection, bad):
            outcomes.append(
                (path, (await api.request(method, path, content=_raw(body), headers=headers)).status_code)
            )
        for path, form in (
            _web_writes(sid, bad) if bad == BAD["nul"] else ()
        ):  # a lone surrogate: UTF-8 forms decode to U+FFFD
            outcomes.append((path, (await web.post(path, data={**form, "csrf_token": csrf})).status_code))
    for method, path, raw in _deep_writes(demo, sid):
        outcomes.append((path, (await api.request(method, path, content=raw, headers=headers)).status_code))
    for path in (
        f"/v1/projects/{demo.project_id}/entities?state=%00",
        f"/v1/projects/{demo.project_id}/kb/search?q=a%00",
    ):
        outcomes.append((path, (await api.get(path)).status_code))
    outcomes.append(("web search", (await web.get("/search", params={"q": "a\x00"})).status_code))
    refused, crashed = sum(400 <= s < 500 for _, s in outcomes), sum(s >= 500 for _, s in outcomes)
    print(f"hostile writes: {refused} refused, {crashed} 5xx, of {len(outcomes)}")
    assert [(p, s) for p, s in outcomes if not 400 <= s < 500] == []
    await _mcp_refuses(doors)
    await _cli_refuses(demo, db_url)
    assert await _counts(db) == before
    assert (await api.get(f"/v1/projects/{demo.project_id}/kb/entries/BR-012")).json() == entry
    await _reads(doors, sid)


async def _mcp_refuses(doors: dict[str, Any]) -> None:
    demo, app = doors["demo"], doors["app"]
    deps = TurnDeps(
        db=app.state.db, user_id=demo.user_id, settings=app.state.settings, project_id=demo.project_id
    )

    async def resolve() -> TurnDeps:
        return deps

    nested: Any = "x"
    for _ in range(100):
        nested = [nested]
    async with Client(build_server(resolve, deps.settings)) as client:
        for arguments in (
            *({"code": "BR-012", "correction": bad} for bad in BAD.values()),
            *({"code": bad} for bad in BAD.values()),
            {"code": "BR-012", "add_code_paths": nested},
        ):
            tool = "get_entry" if set(arguments) == {"code"} else "update_entry"
            result = await client.call_tool(tool, arguments)
            text = str(result.content[0].text)  # type: ignore[union-attr]
            assert result.is_error and text.startswith(f"invalid arguments for {tool}"), text
            assert "validation error for" not in text and len(text) < 400


async def _cli_refuses(demo: Any, url: str) -> None:
    env = {"DATABASE_URL": url, "ORRERY_SECRET_KEY": "test-secret"}
    for args in (
        json.dumps({"code": "BR-012", "correction": BAD["surrogate"]}),
        json.dumps({"code": "BR-012", "correction": BAD["nul"]}),
        '{"code": "BR-012", "correction": ' + DEEP + "}",
    ):
        command = ["tool", "update_entry", "--args", args, "--project", str(demo.project_id)]
        code, _, stderr = await asyncio.to_thread(server_launcher().run_split, command, None, env)
        assert code == 1 and "error:" in stderr and "Traceback" not in stderr, stderr[-2000:]
        assert "validation error for" not in stderr and len(stderr) < 600, stderr[-2000:]


async def test_fullwidth_digits_in_entry_codes(doors: dict[str, Any]) -> None:
    api, demo, db = doors["api"], doors["demo"], doors["db"]
    collection = (await api.get(f"/v1/projects/{demo.project_id}/kb/collections")).json()[0]["id"]
    before = await _counts(db)
    body = {"collection_id": collection, "code": "HX-\uff10\uff101", "name": "fullwidth"}
    assert (await api.post("/v1/kb/entries", json=body)).status_code == 422
    tool = {"project_id": str(demo.project_id), "arguments": {"code": "BR-\uff10\uff112"}}
    refused = await api.post("/v1/tools/get_entry", json=tool)
    assert refused.status_code in (404, 422), refused.text
    assert await _counts(db) == before
    assert (await api.post("/v1/kb/entries", json={**body, "code": "HX-001"})).status_code == 201
