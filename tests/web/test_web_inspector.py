"""The inspector over HTTP (in-process, both dialects): what issue 43 found hard to read. A
comparison lists each message once, a past turn's preview shows human names, the knowledge packet
follows the turn that loaded it, the "why" column stays one line, and search snippets are plain text."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.memory.messages import append_message
from orrery.repo import chat
from tests.support.conversation import write_conversation
from tests.support.web import sign_in


@pytest.fixture
async def client(settings: Settings, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A browser-like client signed in with the demo user's API key."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://orrery") as client:
            response = await sign_in(client, demo.api_key)
            assert response.status_code == 303
            yield client


async def _chat(client: httpx.AsyncClient, demo: Any) -> tuple[str, str]:
    page = await client.get("/", follow_redirects=True)
    found = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text)
    assert found
    made = await client.post(
        "/sessions", data={"csrf_token": found.group(1), "project_id": str(demo.project_id)}
    )
    assert made.status_code == 303
    return str(made.headers["location"]).removeprefix("/s/"), found.group(1)


def _rows(html: str, caption: str) -> list[str]:
    table = re.search(rf"<caption>{caption} \(\d+\)</caption>(.*?)</table>", html, re.S)
    return re.findall(r"<tr><td>(.*?)</td>", table.group(1)) if table else []


async def test_compare_lists_messages_no_strategy_kept_once(
    client: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    sid, _ = await _chat(client, demo)
    await write_conversation(db, demo.user_id, sid)
    compared = await client.get(
        f"/s/{sid}/preview",
        params={"scoping": "last_n", "compare": ["relevance"]},
        headers={"HX-Request": "true"},
    )
    assert compared.status_code == 200, compared.text
    none = _rows(compared.text, "Kept by none")
    assert none == ["messages: seq 1-6"]  # not again as "6 older units"
    assert "older than the last 10</td>" in compared.text
    assert "not above average relevance (6 older units)</td>" in compared.text
    # the units are named as the inspector names them: number, role, date and an excerpt
    assert re.search(r"<tr><td>#\d+ user, \w+ \d+ \d\d:\d\d: “", compared.text)


async def test_a_past_turn_preview_shows_human_names(
    client: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    sid, csrf = await _chat(client, demo)
    task = demo.focus["task"]
    focused = await client.post(
        f"/s/{sid}/focus", data={"csrf_token": csrf, "kind": "task", "entity_id": str(task)}
    )
    assert focused.status_code == 303
    await write_conversation(db, demo.user_id, sid)
    past = await client.get(
        f"/s/{sid}/preview", params={"scoping": "last_n", "at": "5"}, headers={"HX-Request": "true"}
    )
    assert past.status_code == 200, past.text
    items = re.findall(r'<td class="item">(.*?)</td>', past.text)
    assert items and not [i for i in items if re.search(r"\bgroup:|^hint$|^seq \d", i)], items
    assert (
        "how to ask for more" in items
        or any("(group)" in i for i in items)
        or any(i.startswith("#") for i in items)
    )


async def test_the_packet_follows_the_turn_and_names_what_tools_read(
    client: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    sid, csrf = await _chat(client, demo)
    assert "No knowledge loaded for this chat yet" in (await client.get(f"/s/{sid}/inspector")).text
    headers = {"X-CSRF-Token": csrf, "Idempotency-Key": "br-012"}
    turn = await client.post(f"/s/{sid}/turn", json={"content": "What does BR-012 say?"}, headers=headers)
    assert "event: done" in turn.text and "BR-012" in turn.text
    after = (await client.get(f"/s/{sid}/inspector")).text
    assert "No knowledge loaded" not in after and "<strong>BR-012:</strong> Usage overage billing" in after
    # a reply that fetched entries with its tools while no packet was loaded says so
    other, _ = await _chat(client, demo)
    read = {
        "id": "c1",
        "name": "get_entry",
        "args": {"code": "BR-012"},
        "result": "## BR-012: Usage overage billing",
    }
    failed = {
        "id": "c2",
        "name": "get_entry",
        "args": {"code": "XX-999"},
        "result": "XX-999 not found",
        "error": True,
    }
    async with db.transaction() as s:
        await append_message(s, demo.user_id, other, chat.NewMessage("user", "BR-012?"))
        await append_message(
            s,
            demo.user_id,
            other,
            chat.NewMessage("assistant", "BR-012 bills overage.", "planner", [read, failed]),
        )
    shown = (await client.get(f"/s/{other}/inspector")).text
    assert "No knowledge loaded" not in shown and "<code>get_entry</code>: BR-012</li>" in shown
    assert "XX-999" not in shown.split("Knowledge packet", 1)[1]


async def test_search_snippets_are_plain_text(client: httpx.AsyncClient, demo: Any, db: Database) -> None:
    sid, _ = await _chat(client, demo)
    async with db.transaction() as s:
        await append_message(s, demo.user_id, sid, chat.NewMessage("user", "What is the walrus rule?"))
        reply = "**BR-099: Walrus rule** (Business Rules):\n\n> Walruses are billed `per tusk`."
        await append_message(s, demo.user_id, sid, chat.NewMessage("assistant", reply, "planner"))
    found = (await client.get("/search", params={"q": "billed tusk"})).text
    assert "“BR-099: Walrus rule (Business Rules): Walruses are billed per tusk.”" in found
    assert "**" not in found and "`" not in found


async def test_the_composer_invites_what_the_chat_is_about(client: httpx.AsyncClient, demo: Any) -> None:
    sid, csrf = await _chat(client, demo)
    assert (
        'placeholder="Ask anything, or pick a focus above… (Enter sends'
        in (await client.get(f"/s/{sid}")).text
    )
    task = str(demo.focus["task"])
    await client.post(f"/s/{sid}/focus", data={"csrf_token": csrf, "kind": "task", "entity_id": task})
    assert 'placeholder="Ask about Finalize pricing page… (Enter' in (await client.get(f"/s/{sid}")).text


async def test_the_inspector_shows_the_timeline_of_earlier_chats(
    client: httpx.AsyncClient, demo: Any
) -> None:
    """A new chat's preview has the "Earlier chats" timeline section with the demo's earlier chat."""
    sid, _ = await _chat(client, demo)
    preview = await client.get(f"/s/{sid}/preview", headers={"HX-Request": "true"})
    assert preview.status_code == 200, preview.text
    assert "Earlier chats (timeline)" in preview.text
