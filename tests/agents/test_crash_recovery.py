"""A server killed (`kill -9`) in the middle of a turn: after a restart, the unanswered user message is
a failed turn, the model reads the "no reply" note after it (never two user messages in a row), and
`GET /v1/sessions/{id}/context` shows exactly that. Real server processes, a fake provider that hangs,
both databases."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from orrery.memory.turn_view import UNANSWERED
from tests.conftest import settings_for
from tests.support.killable import killable_server, load_demo_into, stored_messages
from tests.support.upstream import FakeProvider, fake_provider, provider_env


@pytest.fixture
def provider() -> Iterator[tuple[FakeProvider, str]]:
    with fake_provider() as found:
        yield found


def _noted(messages: list[dict[str, Any]], text: str) -> bool:
    """`text`'s user message is followed by the note (as the assistant's turn)."""
    for i, m in enumerate(messages[:-1]):
        if m["role"] == "user" and text in str(m["content"]):
            after = messages[i + 1]
            return bool(after["role"] == "assistant" and after["content"] == UNANSWERED)
    raise AssertionError(f"{text!r} is not in {messages}")


def _no_user_twice(messages: list[dict[str, Any]]) -> bool:
    roles = [m["role"] for m in messages if m["role"] in ("user", "assistant")]
    return all(not (a == b == "user") for a, b in zip(roles, roles[1:], strict=False))


@pytest.mark.demo_db
async def test_a_turn_killed_mid_way_is_a_failed_turn_after_restart(
    db_url: str, provider: tuple[FakeProvider, str]
) -> None:
    fake, base_url = provider
    settings = settings_for(db_url)
    demo = await load_demo_into(settings)
    headers = {"Authorization": f"Bearer {demo.api_key}"}
    env = provider_env(base_url)
    fake.mode = "hang"
    with killable_server(db_url, settings.secret_key, env) as first:
        async with httpx.AsyncClient(base_url=first.base, headers=headers, timeout=120) as client:
            sid = (await client.post("/v1/sessions", json={})).json()["id"]
            sent = asyncio.create_task(
                client.post(f"/v1/sessions/{sid}/messages", json={"content": "Plan my week please"})
            )
            await fake.called(0)  # the turn is inside the model call
            live = (await client.get(f"/v1/sessions/{sid}/context")).json()["messages"]
            assert not any(m["content"] == UNANSWERED for m in live)  # its turn runs: no note yet
            running = (await client.get(f"/v1/sessions/{sid}")).json()["messages"]
            assert [m["status"] for m in running] == ["complete"]  # a live turn's message is not failed
            first.kill()
            with contextlib.suppress(httpx.HTTPError):
                await sent  # the server died under it
    assert await stored_messages(settings, sid) == [
        ("user", "Plan my week please", "complete")
    ]  # the leftover

    fake.mode = "echo"
    with killable_server(db_url, settings.secret_key, env) as second:
        async with httpx.AsyncClient(base_url=second.base, headers=headers, timeout=120) as client:
            read = (await client.get(f"/v1/sessions/{sid}")).json()["messages"]
            assert [(m["content"], m["status"]) for m in read] == [("Plan my week please", "failed")]
            assert await stored_messages(settings, sid) == [("user", "Plan my week please", "failed")]
            shown = (await client.get(f"/v1/sessions/{sid}/context")).json()["messages"]
            assert _noted(shown, "Plan my week please")  # read: no live process owns that turn
            calls = len(fake.requests)
            reply = await client.post(
                f"/v1/sessions/{sid}/messages",
                json={"content": "Are you there?"},
                headers={"Accept": "application/json"},
            )
            assert reply.status_code == 200, reply.text
            given = fake.requests[calls]["messages"]
            assert _noted(given, "Plan my week please") and _no_user_twice(given)
            shown = (await client.get(f"/v1/sessions/{sid}/context")).json()["messages"]
            assert _noted(shown, "Plan my week please") and _no_user_twice(shown)
    stored = await stored_messages(settings, sid)
    assert [(r, st) for r, _, st in stored] == [
        ("user", "failed"),
        ("user", "complete"),
        ("assistant", "complete"),
    ]
