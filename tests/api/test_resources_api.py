"""Workspace resources over HTTP: CRUD with validation, context endpoints, and per-route isolation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import identity


@pytest.fixture
async def ctx(db: Database, settings: Settings, demo: Any) -> AsyncIterator[dict[str, Any]]:
    async with db.transaction() as s:
        eve = await identity.create_user(s, "eve@example.org", "Eve")
        _, eve_key = await identity.issue_api_key(s, eve.id, "k", settings.secret_key)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://orrery",
            headers={"Authorization": f"Bearer {demo.api_key}"},
        )
        async with client:
            yield {"api": client, "demo": demo, "eve": {"Authorization": f"Bearer {eve_key}"}}


async def test_entity_and_edge_crud_with_validation(ctx: dict[str, Any]) -> None:
    api, demo = ctx["api"], ctx["demo"]
    created = await api.post(
        f"/v1/projects/{demo.project_id}/entities", json={"kind": "task", "name": "New task"}
    )
    assert created.status_code == 201
    tid = created.json()["id"]
    bad = await api.patch(f"/v1/entities/{tid}", json={"name": ""})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid"
    assert (await api.patch(f"/v1/entities/{tid}", json={"state": "done"})).json()["state"] == "done"
    unknown = await api.post(
        "/v1/edges", json={"src_id": tid, "rel": "blocks", "dst_id": str(demo.focus["plan"])}
    )
    assert unknown.status_code == 422  # the document lists the relations; so does the error
    assert "'belongs_to_plan'" in unknown.json()["error"]["details"][0]["msg"]
    edge = await api.post(
        "/v1/edges", json={"src_id": tid, "rel": "belongs_to_plan", "dst_id": str(demo.focus["plan"])}
    )
    assert edge.status_code == 201
    linked = (await api.get(f"/v1/entities/{tid}/linked")).json()
    assert linked["counts"]["plans"] == 1
    assert (await api.delete(f"/v1/edges/{edge.json()['id']}")).status_code == 204
    assert (await api.get(f"/v1/entities/{tid}/linked")).json()["counts"]["plans"] == 0
    assert (await api.delete(f"/v1/entities/{tid}")).status_code == 204
    assert (await api.get(f"/v1/entities/{tid}")).status_code == 404


async def test_knowledge_context_check_ins_and_summary(ctx: dict[str, Any]) -> None:
    api, demo = ctx["api"], ctx["demo"]
    hits = (
        await api.get(f"/v1/projects/{demo.project_id}/kb/search", params={"q": "overage billing"})
    ).json()
    assert hits["hits"][0]["code"] == "BR-012"
    patched = await api.patch(
        f"/v1/projects/{demo.project_id}/kb/entries/BR-012", json={"add_code_paths": ["backend/billing/x.py"]}
    )
    assert "backend/billing/x.py" in patched.json()["data"]["code_paths"]
    loaded = (
        await api.post(
            "/v1/context/load-for-task",
            json={
                "project_id": str(demo.project_id),
                "task_description": "overage billing on the usage calculator",
            },
        )
    ).json()
    assert loaded["confidence"] in ("high", "medium") and loaded["packet"].startswith("## Context Loaded")
    built = (
        await api.post("/v1/context/build", json={"seeds": [str(demo.focus["task"])], "budget": 600})
    ).json()
    assert built["metadata"]["tokens_used"] <= 600 and built["related"]
    too_big = await api.post("/v1/context/build", json={"seeds": [str(demo.focus["task"])], "budget": 10**6})
    assert too_big.status_code == 422
    assert (await api.post("/v1/check-ins", json={"note": "good", "mood": 4})).status_code == 201
    assert (await api.post("/v1/check-ins", json={"mood": 9})).status_code == 422
    assert (await api.get("/v1/check-ins")).json()[0]["note"] == "good"
    assert (await api.get("/v1/me/summary")).json()["patterns"]
    summary = (await api.get(f"/v1/projects/{demo.project_id}/docs")).json()
    assert summary["total_stories"] == 8 and summary["index_version"]  # seed 004's summary keys


async def test_every_owner_scoped_route_answers_404_to_another_user(ctx: dict[str, Any]) -> None:
    api, demo, eve = ctx["api"], ctx["demo"], ctx["eve"]
    p, t = demo.project_id, demo.focus["task"]
    routes = [
        ("GET", f"/v1/projects/{p}", None),
        ("GET", f"/v1/projects/{p}/entities", None),
        ("POST", f"/v1/projects/{p}/entities", {"kind": "task", "name": "x"}),
        ("GET", f"/v1/entities/{t}", None),
        ("PATCH", f"/v1/entities/{t}", {"state": "done"}),
        ("DELETE", f"/v1/entities/{t}", None),
        ("GET", f"/v1/entities/{t}/linked", None),
        ("POST", "/v1/edges", {"src_id": str(t), "rel": "relates_to", "dst_id": str(demo.focus["plan"])}),
        ("POST", "/v1/context/build", {"seeds": [str(t)]}),
        ("POST", "/v1/context/load-for-task", {"project_id": str(p), "task_description": "overage"}),
        ("GET", f"/v1/projects/{p}/kb/search?q=overage", None),
        ("GET", f"/v1/projects/{p}/kb/collections", None),
        ("GET", f"/v1/projects/{p}/kb/entries/BR-012", None),
        ("PATCH", f"/v1/projects/{p}/kb/entries/BR-012", {"correction": "x"}),
        ("GET", f"/v1/projects/{p}/docs", None),
        ("POST", "/v1/check-ins", {"project_id": str(p)}),
    ]
    for method, path, body in routes:
        response = await api.request(method, path, json=body, headers=eve)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["error"]["code"] == "not_found"
    still = await api.get(f"/v1/entities/{t}")
    assert still.status_code == 200 and still.json()["entity"]["state"] != "done"  # nothing written


async def test_revoked_keys_delete_entry_and_reindex(ctx: dict[str, Any], db: Database) -> None:
    api, demo = ctx["api"], ctx["demo"]
    assert (await api.delete(f"/v1/projects/{demo.project_id}/kb/entries/BR-015")).status_code == 204
    assert (await api.get(f"/v1/projects/{demo.project_id}/kb/entries/BR-015")).status_code == 404
    reindexed = await api.post(f"/v1/projects/{demo.project_id}/docs/index", json={"force": True})
    assert reindexed.status_code == 200 and reindexed.json()["stories"] == 8
    async with db.transaction() as s:
        await identity.revoke_api_keys(s, demo.user_id, "demo")
    response = await api.get("/v1/me")
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"
    assert response.headers["www-authenticate"] == "Bearer"


async def test_openapi_documents_every_route(ctx: dict[str, Any]) -> None:
    spec = (await ctx["api"].get("/openapi.json")).json()
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            assert op.get("summary"), (method, path)
            if path != "/health":
                assert {"401", "404", "422"} <= set(op["responses"]), (method, path)
    assert "ErrorOut" in spec["components"]["schemas"]
