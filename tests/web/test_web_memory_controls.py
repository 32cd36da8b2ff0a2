"""The web app's memory controls, as plain forms (no JavaScript): the new-chat "Don't remember this
chat" box, the chat page's "Remember this chat" switch, and the person's `/me/memory` page; every
write behind the CSRF token, each person's own."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import ChatSession
from orrery.repo import chat, identity
from tests.support.factories import make_user
from tests.support.web import sign_in


@pytest.fixture
async def client(settings: Settings, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A browser-like client signed in as the demo user."""
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://orrery") as c,
    ):
        assert (await sign_in(c, demo.api_key)).status_code == 303
        yield c


async def _csrf(client: httpx.AsyncClient, path: str = "/") -> str:
    page = await client.get(path, follow_redirects=True)
    found = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text)
    assert found, page.text[:500]
    return found.group(1)


async def _remember(db: Database, sid: str) -> bool:
    async with db.sessions() as s:
        record = await s.get(ChatSession, uuid.UUID(sid))
        assert record is not None
        return record.remember


def _switch(page: str) -> str:
    found = re.search(r'<button type="submit" role="switch"[^>]*>', page)
    assert found, "the chat page shows the Remember switch"
    return found.group(0)


async def test_a_new_chat_can_start_not_remembered_and_the_switch_turns_it_back_on(
    client: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    csrf = await _csrf(client)
    kept = await client.post("/sessions", data={"csrf_token": csrf, "project_id": str(demo.project_id)})
    kept_sid = kept.headers["location"].removeprefix("/s/")
    assert await _remember(db, kept_sid) is True
    made = await client.post(
        "/sessions", data={"csrf_token": csrf, "project_id": str(demo.project_id), "dont_remember": "on"}
    )
    sid = made.headers["location"].removeprefix("/s/")
    assert await _remember(db, sid) is False

    page = (await client.get(f"/s/{sid}")).text
    switch = _switch(page)
    assert 'aria-checked="false"' in switch and 'value="true"' in switch
    assert "Remember this chat" in page and "Not remembered" in page

    on = await client.post(f"/s/{sid}/remember", data={"csrf_token": csrf, "remember": "true"})
    assert on.status_code == 303 and on.headers["location"] == f"/s/{sid}"
    assert await _remember(db, sid) is True
    switch = _switch((await client.get(f"/s/{sid}")).text)
    assert 'aria-checked="true"' in switch and 'value="false"' in switch
    off = await client.post(f"/s/{sid}/remember", data={"csrf_token": csrf, "remember": "false"})
    assert off.status_code == 303 and await _remember(db, sid) is False

    assert (await client.post(f"/s/{sid}/remember", data={"remember": "true"})).status_code == 403
    bad = await client.post(f"/s/{sid}/remember", data={"csrf_token": csrf, "remember": "maybe"})
    assert bad.status_code == 400 and await _remember(db, sid) is False


async def test_another_persons_chat_is_not_found(
    client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
        theirs = str((await chat.create_session(s, eve.id, title="Eve's")).id)
    csrf = await _csrf(client)
    refused = await client.post(f"/s/{theirs}/remember", data={"csrf_token": csrf, "remember": "false"})
    assert refused.status_code == 404 and await _remember(db, theirs) is True


async def test_the_memory_page_shows_and_saves_the_persons_own_choices(
    client: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
    home = (await client.get("/", follow_redirects=True)).text
    assert 'href="/me/memory"' in home
    page = (await client.get("/me/memory")).text
    assert re.search(r'name="across" value="on"\s+checked', page)
    assert not re.search(r'name="other_projects" value="on"\s+checked', page)

    csrf = await _csrf(client, "/me/memory")
    saved = await client.post("/me/memory", data={"csrf_token": csrf, "other_projects": "on"})
    assert saved.status_code == 303
    page = (await client.get(saved.headers["location"])).text
    assert "Saved." in page
    assert not re.search(r'name="across" value="on"\s+checked', page)  # unticked: off
    assert re.search(r'name="other_projects" value="on"\s+checked', page)
    async with db.sessions() as s:
        mine = await identity.memory_choices(s, demo.user_id)
        theirs = await identity.memory_choices(s, eve.id)
    assert (mine.recall_across_chats, mine.recall_other_projects) == (False, True)
    assert (theirs.recall_across_chats, theirs.recall_other_projects) == (True, False)

    assert (await client.post("/me/memory", data={"across": "on"})).status_code == 403
    async with db.sessions() as s:
        assert (await identity.memory_choices(s, demo.user_id)).recall_across_chats is False
    client.cookies.clear()  # signed out
    assert (await client.get("/me/memory")).headers["location"] == "/login?next=%2Fme%2Fmemory"
