"""Issue 42, items 2-9, each through the door where it was found, on both databases: a refused edit
hides nothing, a refused OpenAI message makes no session, dates are ISO-8601, entry codes ASCII,
the OpenAPI document speaks JSON Schema, unknown fields are named, refusals are short, and
`orrery tool --user` sees only that user's projects."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from sqlalchemy import func, select, text

from orrery.db.engine import Database
from orrery.db.migrations import downgrade_async, upgrade_async
from orrery.db.models import ChatSession, Entity
from orrery.repo import identity
from tests.support.entrypoint import server_launcher
from tests.support.factories import make_user

JSON_TURN = {"Accept": "application/json"}


async def _count(db: Database, model: Any) -> int:
    async with db.sessions() as s:
        return int((await s.execute(select(func.count()).select_from(model))).scalar_one())


async def test_a_refused_edit_hides_nothing(api: httpx.AsyncClient, demo: Any) -> None:
    sid = (await api.post("/v1/sessions", json={"project_id": str(demo.project_id)})).json()["id"]
    for words in ("hello there", "and what next?"):
        assert (
            await api.post(f"/v1/sessions/{sid}/messages", json={"content": words}, headers=JSON_TURN)
        ).is_success
    before = (await api.get(f"/v1/sessions/{sid}")).json()["messages"]
    edit = {"content": "x", "agent": "root"}
    refused = await api.post(f"/v1/sessions/{sid}/messages/3/edit", json=edit, headers=JSON_TURN)
    assert refused.status_code == 422, refused.text
    assert (await api.get(f"/v1/sessions/{sid}")).json()["messages"] == before


async def test_a_refused_openai_message_makes_no_session(api: httpx.AsyncClient, db: Database) -> None:
    sessions = await _count(db, ChatSession)
    for content in ("   ", "x" * 20_001):
        body = {"model": "orrery", "messages": [{"role": "user", "content": content}]}
        assert (await api.post("/v1/chat/completions", json=body)).status_code in (400, 422)
    assert await _count(db, ChatSession) == sessions


async def test_due_at_is_iso_8601_only(api: httpx.AsyncClient, demo: Any, db: Database) -> None:
    entities = await _count(db, Entity)
    for due in (0, -1, 1e11, "0", "1e11", True):
        body = {"kind": "task", "name": "x", "due_at": due}
        assert (await api.post(f"/v1/projects/{demo.project_id}/entities", json=body)).status_code == 422
        patch = await api.patch(f"/v1/entities/{demo.focus['task']}", json={"due_at": due})
        assert patch.status_code == 422 and "ISO-8601" in patch.text
    assert await _count(db, Entity) == entities
    ok = {"kind": "task", "name": "x", "due_at": "2026-05-01T09:00:00Z"}
    assert (await api.post(f"/v1/projects/{demo.project_id}/entities", json=ok)).status_code == 201


async def test_openapi_and_unknown_fields(api: httpx.AsyncClient, demo: Any) -> None:
    schemas = (await api.get("/openapi.json")).json()["components"]["schemas"]
    assert {"minimum": 1, "maximum": 5, "type": "integer"}.items() <= schemas["CheckInIn"]["properties"][
        "mood"
    ]["anyOf"][0].items()
    assert schemas["BuildIn"]["properties"]["budget"]["anyOf"][0]["maximum"] == 32_000
    assert "'ge'" not in str(schemas["CollectionIn"]["properties"]["priority"])
    assert "task" in str(schemas["ExcludeSpec"]["properties"]["kinds"]["items"]["enum"])
    assert "last_n" in str(schemas["SessionIn"]["properties"]["scoping_strategy"])
    sid = (await api.post("/v1/sessions", json={})).json()["id"]
    moved = await api.patch(f"/v1/sessions/{sid}", json={"project_id": str(demo.project_id)})
    assert moved.status_code == 422 and "project_id" in moved.json()["error"]["message"]
    blank = await api.patch(f"/v1/entities/{demo.focus['task']}", json={"state": "   "})
    assert blank.status_code == 422
    extra = {"model": "orrery", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.2}
    assert (await api.post("/v1/chat/completions", json=extra)).status_code == 200  # clients' extras kept


async def test_tool_door_refusals_are_short_and_bounded(api: httpx.AsyncClient, demo: Any) -> None:
    project = str(demo.project_id)
    for limit in (0, 51, -(2**63), 10**30):
        body = {"project_id": project, "arguments": {"query": "overage", "limit": limit}}
        error = (await api.post("/v1/tools/search_knowledge", json=body)).json()["error"]
        assert error["message"].startswith("invalid arguments for search_knowledge: limit:"), error
    huge = {"project_id": project, "arguments": {"query": "q" * 900_000}}
    answer = await api.post("/v1/tools/search_knowledge", json=huge)
    assert answer.status_code == 422 and len(answer.text) < 500 and "validation error for" not in answer.text


async def test_orrery_tool_user_lists_only_their_projects(db: Database, demo: Any, db_url: str) -> None:
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
        await identity.create_project(s, eve.id, "Eve's one")
        await identity.create_project(s, eve.id, "Eve's two")
        email = eve.email
    env = {"DATABASE_URL": db_url, "ORRERY_SECRET_KEY": "test-secret"}
    command = ["tool", "search_knowledge", "--args", '{"query": "overage"}', "--user", email]
    code, _, stderr = await asyncio.to_thread(server_launcher().run_split, command, None, env)
    assert code == 1 and "Eve's one" in stderr and "Atlas" not in stderr, stderr


async def test_migration_repairs_unreadable_rows(
    db: Database, demo: Any, db_url: str, api: httpx.AsyncClient
) -> None:
    if db.dialect != "sqlite":  # PostgreSQL never stored them
        return
    await downgrade_async(db_url, "0017mc")
    async with db.transaction() as s:
        await s.execute(
            text("UPDATE kb_entries SET data = :d WHERE code = 'BR-012'"),
            {"d": '{"corrections": [{"text": "\\ud800"}]}'},
        )
        other = "(SELECT min(code) FROM kb_entries WHERE code <> 'BR-012')"
        await s.execute(text(f"UPDATE kb_entries SET code = 'HX-\uff10\uff101' WHERE code = {other}"))
    await upgrade_async(db_url)
    entry = await api.get(f"/v1/projects/{demo.project_id}/kb/entries/BR-012")
    assert entry.status_code == 200 and "\ufffd" in entry.text
    assert (await api.get(f"/v1/projects/{demo.project_id}/kb/entries/HX-001")).status_code == 200
