"""Hostile input answers a clear 4xx and stores nothing: huge numbers, nulls, malformed context
requests, lone surrogates, deep nesting, impossible dates, oversized bodies and fields."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import Entity, KbEntry
from orrery.services.limits import MAX_JSON_FIELD_BYTES

HUGE = 2**63


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
            yield {"api": client, "demo": demo, "db": db}


async def _count(db: Database, model: Any) -> int:
    async with db.sessions() as s:
        return int((await s.execute(select(func.count()).select_from(model))).scalar_one())


def _refused(response: httpx.Response, status: int = 422) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["message"]
    return error


async def test_huge_offsets_and_sequence_numbers(ctx: dict[str, Any]) -> None:
    api, demo = ctx["api"], ctx["demo"]
    _refused(await api.get(f"/v1/projects/{demo.project_id}/entities", params={"offset": HUGE}))
    sid = (await api.post("/v1/sessions", json={})).json()["id"]
    _refused(await api.get(f"/v1/sessions/{sid}", params={"after_seq": HUGE}))
    assert (await api.get(f"/v1/sessions/{sid}", params={"after_seq": 2**31 - 1})).status_code == 200
    page = await api.get("/v1/sessions", params={"limit": 200})  # the documented maximum
    assert page.status_code == 200 and page.json()["limit"] == 200
    _refused(await api.get("/v1/sessions", params={"limit": 201}))


async def test_patch_refuses_null_for_required_fields(ctx: dict[str, Any]) -> None:
    api, demo = ctx["api"], ctx["demo"]
    task = str(demo.focus["task"])
    before = (await api.get(f"/v1/entities/{task}")).json()["entity"]
    for field in ("name", "state", "props"):
        error = _refused(await api.patch(f"/v1/entities/{task}", json={field: None}))
        assert "cannot be null" in json.dumps(error)
    assert (await api.get(f"/v1/entities/{task}")).json()["entity"] == before
    assert (await api.patch(f"/v1/entities/{task}", json={"description": None})).status_code == 200


async def test_malformed_context_build_requests(ctx: dict[str, Any]) -> None:
    api, demo = ctx["api"], ctx["demo"]
    seeds = [str(demo.focus["task"])]
    for extra in (
        {"include": {"bogus": True}},
        {"exclude": {"bogus": True}},
        {"include": {"depth": 9}},
        {"existing_context": {"primary": [1, 2]}},
        {"existing_context": {"metadata": "x"}},
        {"exclude": {"older_than": "1000000000d"}},
        {"template": "a" * 251},  # longer than a file name may be: refused, never an OSError
        {"template": "../secrets"},
    ):
        _refused(await api.post("/v1/context/build", json={"seeds": seeds, **extra}))
    ok = await api.post("/v1/context/build", json={"seeds": seeds, "exclude": {"older_than": "30d"}})
    assert ok.status_code == 200


async def test_lone_surrogates_and_deep_nesting(ctx: dict[str, Any]) -> None:
    api, demo, db = ctx["api"], ctx["demo"], ctx["db"]
    sid = (await api.post("/v1/sessions", json={})).json()["id"]
    headers = {"Content-Type": "application/json"}
    part = b'{"type": "text", "text": "hi \\ud800"}'
    lone = (
        b'{"trigger": "submit-message", "id": "c", "messages": [{"id": "m", "role": "user", "parts": ['
        + part
        + b"]}]}"
    )
    _refused(await api.post(f"/v1/sessions/{sid}/chat", content=lone, headers=headers))
    _refused(
        await api.post(f"/v1/sessions/{sid}/messages", content=b'{"content": "x\\udfff"}', headers=headers)
    )
    deep = b'{"messages": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    response = await api.post(f"/v1/sessions/{sid}/chat", content=deep, headers=headers)
    assert 400 <= response.status_code < 500
    assert (await api.get(f"/v1/sessions/{sid}")).json()["messages"] == []
    props: dict[str, Any] = {}
    for _ in range(300):
        props = {"a": props}
    entities = await _count(db, Entity)
    error = _refused(
        await api.post(
            f"/v1/projects/{demo.project_id}/entities", json={"kind": "task", "name": "x", "props": props}
        )
    )
    assert "nested deeper" in json.dumps(error)
    assert await _count(db, Entity) == entities


async def test_dates_that_overflow_in_utc(ctx: dict[str, Any]) -> None:
    api, demo = ctx["api"], ctx["demo"]
    for due in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):
        body = {"kind": "task", "name": "x", "due_at": due}
        _refused(await api.post(f"/v1/projects/{demo.project_id}/entities", json=body))
        _refused(await api.patch(f"/v1/entities/{demo.focus['task']}", json={"due_at": due}))


async def test_size_limits(ctx: dict[str, Any]) -> None:
    api, demo, db = ctx["api"], ctx["demo"], ctx["db"]
    entities, entries = await _count(db, Entity), await _count(db, KbEntry)
    url = f"/v1/projects/{demo.project_id}/entities"
    huge = {"kind": "task", "name": "x", "props": {"blob": "x" * 50_000_000}}
    assert _refused(await api.post(url, json=huge), 413)["code"] == "too_large"

    async def chunked() -> AsyncIterator[bytes]:
        yield b'{"kind": "task", "name": "x", "props": {"blob": "'
        for _ in range(30):
            yield b"x" * 100_000
        yield b'"}}'

    streamed = await api.post(url, content=chunked(), headers={"Content-Type": "application/json"})
    _refused(streamed, 413)
    big = {"blob": "x" * (MAX_JSON_FIELD_BYTES + 1)}
    assert "limit is" in json.dumps(
        _refused(await api.post(url, json={"kind": "task", "name": "x", "props": big}))
    )
    collection = (await api.get(f"/v1/projects/{demo.project_id}/kb/collections")).json()[0]["id"]
    entry = {"collection_id": collection, "code": "BIG-1", "name": "big", "data": big}
    _refused(await api.post("/v1/kb/entries", json=entry))
    _refused(await api.post(url, json={"kind": "task", "name": "x" * 301}))
    assert (await _count(db, Entity), await _count(db, KbEntry)) == (entities, entries)


async def test_docs_offline_with_authorize_and_405_allow(ctx: dict[str, Any]) -> None:
    api = ctx["api"]
    page = await api.get("/docs")
    assert page.status_code == 200 and "cdn" not in page.text.lower()
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert f"/static-offline-docs/{asset}" in page.text
        assert (await api.get(f"/static-offline-docs/{asset}")).status_code == 200
    schema = (await api.get("/openapi.json")).json()
    schemes = schema["components"]["securitySchemes"]
    assert {s["type"] for s in schemes.values()} == {"http", "apiKey"}
    assert schema["paths"]["/v1/projects"]["get"]["security"]
    wrong = await api.delete("/v1/projects")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "GET"
    several = await api.put("/v1/sessions/any")  # three routes serve this path: all are named
    assert several.status_code == 405 and several.headers["allow"] == "DELETE, GET, PATCH"
    basic = await api.get("/v1/me", headers={"Authorization": "Basic abc"})
    assert basic.status_code == 401 and "Bearer" in basic.json()["error"]["message"]
    by_header = await api.get("/v1/me", headers={"Authorization": "", "X-API-Key": ctx["demo"].api_key})
    assert by_header.status_code == 200


@pytest.fixture
def cors_settings(settings: Settings) -> Iterator[Settings]:
    yield settings.model_copy(update={"cors_origins": "http://localhost:3000"})


async def test_cors_preflight_only_when_configured(ctx: dict[str, Any], cors_settings: Settings) -> None:
    preflight = {
        "Origin": "http://localhost:3000",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
    }
    off = await ctx["api"].options("/v1/sessions/x/chat", headers=preflight)
    assert "access-control-allow-origin" not in off.headers
    app = create_app(cors_settings)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://o") as c,
    ):
        on = await c.options("/v1/sessions/x/chat", headers=preflight)
        assert on.status_code == 200
        assert on.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert "authorization" in on.headers["access-control-allow-headers"].lower()
        other = await c.options("/v1/sessions/x/chat", headers={**preflight, "Origin": "http://evil"})
        assert other.status_code == 400
        origin = {"Origin": "http://localhost:3000", "Content-Type": "application/json"}
        big = await c.post("/v1/kb/entries", content=b"x" * 2_000_000, headers=origin)
        assert big.status_code == 413 and big.headers["access-control-allow-origin"] == origin["Origin"]


async def test_numbers_and_flags_are_strictly_typed(ctx: dict[str, Any]) -> None:
    """`false` is not a hop count and `0` is not a flag: both are refused, not coerced."""
    api, demo = ctx["api"], ctx["demo"]
    load = {"project_id": str(demo.project_id), "task_description": "seat minimum"}
    _refused(await api.post("/v1/context/load-for-task", json={**load, "max_hops": False}))
    _refused(await api.post("/v1/context/load-for-task", json={**load, "max_results": "3"}))
    assert (await api.post("/v1/context/load-for-task", json={**load, "max_hops": 1})).status_code == 200
    _refused(await api.post(f"/v1/projects/{demo.project_id}/docs/index", json={"force": 0}))
    sid = (await api.post("/v1/sessions", json={})).json()["id"]
    _refused(await api.patch(f"/v1/sessions/{sid}", json={"clear_focus": 0}))
    _refused(
        await api.post(
            "/v1/chat/completions",
            json={"model": "orrery", "messages": [{"role": "user", "content": "hi"}], "stream": 1},
        ),
        400,  # OpenAI's status for an invalid request
    )
