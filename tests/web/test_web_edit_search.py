"""Edit-and-resend (web and API), the sidebar search, return-to after sign-in, and the inspector's
human names and left-out items, over HTTP on both dialects."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import Message
from orrery.memory.messages import NewMessage, append_message
from orrery.repo import chat, identity
from tests.support.factories import make_user
from tests.support.web import sign_in, signed_in_client


@pytest.fixture
async def client(settings: Settings, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in_client(settings, demo) as client:
        yield client


async def _start(client: httpx.AsyncClient, demo: Any, title: str = "") -> tuple[str, str]:
    page = await client.get("/", follow_redirects=True)
    csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text)
    assert csrf
    made = await client.post(
        "/sessions", data={"csrf_token": csrf.group(1), "project_id": str(demo.project_id), "title": title}
    )
    return csrf.group(1), str(made.headers["location"]).removeprefix("/s/")


async def _turn(client: httpx.AsyncClient, csrf: str, url: str, content: str) -> str:
    streamed = await client.post(url, json={"content": content}, headers={"X-CSRF-Token": csrf})
    assert streamed.status_code == 200 and "event: done" in streamed.text, streamed.text[:300]
    return streamed.text


async def test_edit_and_resend_keeps_the_old_exchange_superseded_and_out_of_the_context(
    client: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    csrf, sid = await _start(client, demo)
    await _turn(client, csrf, f"/s/{sid}/turn", "Tell me about the zebra migration")
    await _turn(client, csrf, f"/s/{sid}/m/1/edit", "Tell me about the pricing page")
    page = (await client.get(f"/s/{sid}")).text
    assert "pricing page" in page and "zebra" not in page
    context = (await client.get(f"/s/{sid}/inspector")).text
    assert "zebra" not in context  # neither shown nor sent to the model again
    again = await client.post(f"/s/{sid}/m/1/edit", json={"content": "x"}, headers={"X-CSRF-Token": csrf})
    assert again.status_code == 400 and "latest user message" in again.text
    async with db.transaction() as s:
        rows = (await s.execute(select(Message).where(Message.session_id == uuid.UUID(sid)))).scalars()
        stored = {m.seq: m for m in rows}
        assert len(stored) == 4 and stored[1].superseded_at and stored[2].superseded_at
        assert stored[3].superseded_at is None and "pricing" in stored[3].content
        assert [m.seq for m in await chat.list_messages(s, demo.user_id, sid)] == [3, 4]


async def test_the_api_edits_the_last_user_message(api: httpx.AsyncClient, demo: Any, db: Database) -> None:
    sid = (await api.post("/v1/sessions", json={"project_id": str(demo.project_id)})).json()["id"]
    json_turn = {"Accept": "application/json"}
    first = await api.post(f"/v1/sessions/{sid}/messages", json={"content": "hello there"}, headers=json_turn)
    assert first.status_code == 200
    edited = await api.post(
        f"/v1/sessions/{sid}/messages/1/edit", json={"content": "what is my focus?"}, headers=json_turn
    )
    assert edited.status_code == 200 and edited.json()["reply"]
    listed = (await api.get(f"/v1/sessions/{sid}")).json()["messages"]
    assert [m["seq"] for m in listed] == [3, 4] and listed[0]["content"] == "what is my focus?"
    stale = await api.post(f"/v1/sessions/{sid}/messages/2/edit", json={"content": "x"}, headers=json_turn)
    assert stale.status_code == 422 and "latest user message" in stale.text
    blank = await api.post(f"/v1/sessions/{sid}/messages/3/edit", json={"content": "  "}, headers=json_turn)
    assert blank.status_code in (400, 422)
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
        theirs = await chat.create_session(s, eve.id)
    foreign = await api.post(
        f"/v1/sessions/{theirs.id}/messages/1/edit", json={"content": "x"}, headers=json_turn
    )
    assert foreign.status_code == 404


async def test_search_finds_titles_and_message_text_of_my_chats_only(
    client: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    csrf, sid = await _start(client, demo, title="Quarterly pricing review")
    await _turn(client, csrf, f"/s/{sid}/turn", "Remember the walrus invoices please")
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
        project = await identity.create_project(s, eve.id, "Eve's")
        theirs = await chat.create_session(s, eve.id, project_id=project.id, title="Eve walrus plans")
        said = NewMessage(role="user", content="Eve's walrus invoices and the zeppelin ledger")
        await append_message(s, eve.id, theirs.id, said)
    by_title = (await client.get("/search", params={"q": "quarterly"})).text
    assert f"/s/{sid}" in by_title and "Quarterly pricing review" in by_title
    by_text = (await client.get("/search", params={"q": "walrus invoices"})).text
    assert f"/s/{sid}#m1" in by_text and "walrus invoices" in by_text
    assert str(theirs.id) not in by_text and "Eve walrus" not in by_text
    assert "No chat mentions" in (await client.get("/search", params={"q": "nonexistentword"})).text
    assert "No chat mentions" in (await client.get("/search", params={"q": "zeppelin"})).text  # Eve's word


async def test_sign_in_returns_to_the_page_asked_for(settings: Settings, demo: Any) -> None:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://orrery") as client:
            asked = await client.get("/s/abc?x=1")
            assert asked.headers["location"] == "/login?next=%2Fs%2Fabc%3Fx%3D1"
            form = (await client.get(asked.headers["location"])).text
            assert 'name="next" value="/s/abc?x=1"' in form and "orrery web link" in form
            back = await sign_in(client, demo.api_key, next="/s/abc?x=1")
            assert back.headers["location"] == "/s/abc?x=1"
            for evil in ("//evil.example/x", "https://evil.example", "/\\evil"):
                out = await sign_in(client, demo.api_key, next=evil)
                assert out.headers["location"] == "/"


async def test_the_inspector_names_items_and_lists_what_was_left_out(
    client: httpx.AsyncClient, demo: Any
) -> None:
    csrf, sid = await _start(client, demo)
    await client.post(
        f"/s/{sid}/focus", data={"csrf_token": csrf, "kind": "task", "entity_id": str(demo.focus["task"])}
    )
    await _turn(client, csrf, f"/s/{sid}/turn", "What is this task blocked by?")
    html = (await client.get(f"/s/{sid}/inspector")).text
    assert "task: Finalize pricing page" in html  # the focus item by name, not task:<uuid>
    assert not re.search(r'<td class="item">[^<]*task:[0-9a-f-]{36}', html)
    assert "Left out" in html and "Legal review of pricing terms" in html
    assert re.search(r"#1 user, \w+ \d+ \d\d:\d\d: “What is this task blocked by\?”", html)
    totals = re.findall(r'data-total-tokens="(\d+)"', html)
    assert totals and all(int(t) > 0 for t in totals)
    assert 'class="focus-graph"' in html and 'role="button" tabindex="0"' in html
    assert "style=" not in html
