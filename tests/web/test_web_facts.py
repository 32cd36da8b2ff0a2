"""The "What Orrery remembers about you" page over HTTP (in-process, both dialects): see, add,
correct and forget facts behind the CSRF token; another person's fact is not found; deleting a chat
with "and its facts" ticked forgets them."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import facts
from tests.support.factories import make_user
from tests.support.web import signed_in_client


@pytest.fixture
async def client(settings: Settings, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in_client(settings, demo) as client:
        yield client


async def _csrf(client: httpx.AsyncClient) -> str:
    page = await client.get("/me/facts")
    found = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text)
    assert found, page.text[:500]
    return found.group(1)


async def test_see_add_edit_and_forget_facts(client: httpx.AsyncClient, db: Database, demo: Any) -> None:
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
        theirs, _ = await facts.create_fact(s, eve.id, "Eve's secret")
    page = await client.get("/me/facts")
    assert page.status_code == 200 and "What Orrery remembers about you" in page.text
    assert "Nothing remembered yet" in page.text and "Eve's secret" not in page.text
    token = await _csrf(client)
    assert (await client.post("/me/facts", data={"text": "x"})).status_code == 403  # no CSRF token
    made = await client.post(
        "/me/facts",
        data={
            "csrf_token": token,
            "text": "Sister lives in <b>Porto</b>",
            "subject": "sister",
            "valid_from": "",
        },
    )
    assert made.status_code == 303
    moved = {
        "csrf_token": token,
        "text": "Sister moved to Lisbon",
        "subject": "Sister",
        "valid_from": "2026-03-01",
    }
    assert (await client.post("/me/facts", data=moved)).status_code == 303
    page = await client.get("/me/facts")
    assert (
        "Sister moved to Lisbon" in page.text
        and "Porto" not in page.text
        and 'value="2026-03-01"' in page.text
    )
    history = await client.get("/me/facts?history=true")
    assert "Sister lives in &lt;b&gt;Porto&lt;/b&gt;" in history.text and "replaced" in history.text
    async with db.sessions() as s:
        lisbon = (await facts.list_facts(s, demo.user_id))[0]
    edited = await client.post(
        f"/me/facts/{lisbon.id}/edit",
        data={
            "csrf_token": token,
            "text": "Sister moved to Lisbon in March",
            "subject": "sister",
            "valid_from": "",
        },
    )
    assert edited.status_code == 303
    assert "Sister moved to Lisbon in March" in (await client.get("/me/facts")).text
    bad = await client.post("/me/facts", data={"csrf_token": token, "text": "x", "valid_from": "soon"})
    assert bad.status_code == 400 and "not a date" in bad.text
    for path in (f"/me/facts/{theirs.id}/edit", f"/me/facts/{theirs.id}/forget"):
        assert (await client.post(path, data={"csrf_token": token, "text": "mine"})).status_code == 404
    assert (await client.post(f"/me/facts/{lisbon.id}/forget", data={"csrf_token": token})).status_code == 303
    assert "Nothing remembered yet" in (await client.get("/me/facts?history=true")).text
    async with db.sessions() as s:
        assert [f.text for f in await facts.list_facts(s, eve.id)] == ["Eve's secret"]


async def test_delete_a_chat_and_its_facts(client: httpx.AsyncClient, db: Database, demo: Any) -> None:
    token = await _csrf(client)
    made = await client.post("/sessions", data={"csrf_token": token, "project_id": str(demo.project_id)})
    sid = str(made.headers["location"]).removeprefix("/s/")
    chat_page = await client.get(f"/s/{sid}")
    assert 'name="forget_facts"' in chat_page.text and 'href="/me/facts"' in chat_page.text
    async with db.transaction() as s:
        await facts.create_fact(s, demo.user_id, "Locker code 4521", source_session_id=uuid.UUID(sid))
    gone = await client.post(f"/s/{sid}/delete", data={"csrf_token": token, "forget_facts": "true"})
    assert gone.status_code == 303
    async with db.sessions() as s:
        assert await facts.list_facts(s, demo.user_id, history=True) == []


async def test_the_inspector_names_the_facts_section_and_each_fact(
    client: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    token = await _csrf(client)
    made = await client.post("/sessions", data={"csrf_token": token, "project_id": str(demo.project_id)})
    sid = str(made.headers["location"]).removeprefix("/s/")
    async with db.transaction() as s:
        await facts.create_fact(s, demo.user_id, "Prefers morning check-ins")
    inspector = (await client.get(f"/s/{sid}/inspector")).text
    assert "Remembered facts" in inspector and "Fact: Prefers morning check-ins" in inspector


async def test_instructions_are_shown_added_with_a_project_and_filtered(
    client: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    token = await _csrf(client)
    made = await client.post(
        "/me/facts",
        data={
            "csrf_token": token,
            "text": "Always cite sources",
            "kind": "instruction",
            "project_id": str(demo.project_id),
        },
    )
    assert made.status_code == 303
    assert (
        await client.post("/me/facts", data={"csrf_token": token, "text": "x", "kind": "rule"})
    ).status_code in (400, 422)
    async with db.sessions() as s:
        [rule] = await facts.list_facts(s, demo.user_id, kind="instruction")
    assert rule.project_id == demo.project_id
    page = await client.get("/me/facts", params={"kind": "instruction"})
    assert page.status_code == 200 and "Always cite sources" in page.text and ">instruction<" in page.text
    edited = await client.post(
        f"/me/facts/{rule.id}/edit",
        data={"csrf_token": token, "text": "Always cite sources", "kind": "preference", "project_id": ""},
    )
    assert edited.status_code == 303
    async with db.sessions() as s:
        changed = await facts.get_fact(s, demo.user_id, rule.id)
    assert (changed.kind, changed.project_id) == ("preference", None)
