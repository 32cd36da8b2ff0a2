"""What the person controls, over HTTP: `remember` on a chat (REST, Vercel body field, OpenAI
`store: false`) and their own `/v1/me/memory` choices, each scoped to the caller."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import openai

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import ChatSession
from orrery.repo import chat, identity
from tests.support.factories import make_user


async def _stranger(db: Database, settings: Settings) -> tuple[dict[str, str], str]:
    """Another person: (auth headers, one of their sessions)."""
    async with db.transaction() as s:
        user = await make_user(s, "Eve")
        _, key = await identity.issue_api_key(s, user.id, "k", settings.secret_key)
        record = await chat.create_session(s, user.id, title="Eve's")
        return {"Authorization": f"Bearer {key}"}, str(record.id)


async def _remember(db: Database, sid: str) -> bool:
    async with db.sessions() as s:
        record = await s.get(ChatSession, uuid.UUID(sid))
        assert record is not None
        return record.remember


async def test_remember_is_set_at_creation_changed_by_patch_and_read_everywhere(
    api: httpx.AsyncClient,
) -> None:
    default = (await api.post("/v1/sessions", json={"title": "kept"})).json()
    assert default["remember"] is True
    made = await api.post("/v1/sessions", json={"title": "private", "remember": False})
    assert made.status_code == 201 and made.json()["remember"] is False
    sid = made.json()["id"]
    assert (await api.get(f"/v1/sessions/{sid}")).json()["remember"] is False
    listed = {i["id"]: i["remember"] for i in (await api.get("/v1/sessions")).json()["items"]}
    assert listed[sid] is False and listed[default["id"]] is True

    back = await api.patch(f"/v1/sessions/{sid}", json={"remember": True})
    assert back.status_code == 200 and back.json()["remember"] is True
    renamed = await api.patch(f"/v1/sessions/{sid}", json={"title": "still kept"})
    assert renamed.json()["remember"] is True  # left out: unchanged
    assert (await api.patch(f"/v1/sessions/{sid}", json={"remember": False})).json()["remember"] is False
    assert (await api.get(f"/v1/sessions/{sid}")).json()["remember"] is False

    for bad in ("no", 0, None):
        assert (await api.post("/v1/sessions", json={"remember": bad})).status_code == 422
    assert (await api.patch(f"/v1/sessions/{sid}", json={"remember": "yes"})).status_code == 422
    assert (await api.get(f"/v1/sessions/{sid}")).json()["remember"] is False


async def test_another_persons_chat_answers_404_and_stays_as_it_was(
    api: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    theirs, foreign = await _stranger(db, settings)
    assert (await api.patch(f"/v1/sessions/{foreign}", json={"remember": False})).status_code == 404
    assert await _remember(db, foreign) is True
    refused = await api.post(
        f"/v1/sessions/{foreign}/chat",
        json={"trigger": "submit-message", "id": "c", "messages": [_ui("hi")], "remember": False},
    )
    assert refused.status_code == 404 and await _remember(db, foreign) is True
    mine = await api.patch(f"/v1/sessions/{foreign}", json={"remember": False}, headers=theirs)
    assert mine.status_code == 200 and mine.json()["remember"] is False


async def test_memory_choices_are_each_persons_own(
    api: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    theirs, _ = await _stranger(db, settings)
    assert (await api.get("/v1/me/memory")).json() == {
        "recall_across_chats": True,
        "recall_other_projects": False,
    }
    changed = await api.patch("/v1/me/memory", json={"recall_other_projects": True})
    assert changed.status_code == 200
    assert changed.json() == {"recall_across_chats": True, "recall_other_projects": True}
    off = await api.patch("/v1/me/memory", json={"recall_across_chats": False, "recall_other_projects": None})
    assert off.json() == {"recall_across_chats": False, "recall_other_projects": True}  # null: unchanged
    assert (await api.get("/v1/me/memory")).json() == off.json()

    their_view = await api.get("/v1/me/memory", headers=theirs)
    assert their_view.json() == {"recall_across_chats": True, "recall_other_projects": False}
    await api.patch("/v1/me/memory", json={"recall_other_projects": True}, headers=theirs)
    assert (await api.get("/v1/me/memory")).json() == off.json()  # theirs changed, mine did not

    for bad in ({"recall_accross_chats": False}, {"recall_across_chats": "off"}, {"user_id": "x"}):
        refused = await api.patch("/v1/me/memory", json=bad)
        assert refused.status_code == 422, bad
    assert (await api.get("/v1/me/memory")).json() == off.json()
    assert (await api.get("/v1/me/memory", headers={"Authorization": "Bearer orr_nope"})).status_code == 401


def _ui(text: str, n: int = 0) -> dict[str, Any]:
    return {"id": f"m{n}", "role": "user", "parts": [{"type": "text", "text": text}]}


async def test_the_vercel_body_field_sets_remember_before_the_turn(
    api: httpx.AsyncClient, db: Database
) -> None:
    sid = (await api.post("/v1/sessions", json={})).json()["id"]
    body: dict[str, Any] = {"trigger": "submit-message", "id": "c", "messages": [_ui("Plan my week")]}
    sent = await api.post(f"/v1/sessions/{sid}/chat", json={**body, "remember": False})
    assert sent.status_code == 200 and "[DONE]" in sent.text
    assert await _remember(db, sid) is False
    plain = await api.post(f"/v1/sessions/{sid}/chat", json=body)  # left out: unchanged
    assert plain.status_code == 200 and await _remember(db, sid) is False
    regenerate = {
        "trigger": "regenerate-message",
        "id": "c",
        "messages": [_ui("Plan my week")],
        "messageId": "m1",
    }
    again = await api.post(f"/v1/sessions/{sid}/chat", json={**regenerate, "remember": True})
    assert again.status_code == 200 and await _remember(db, sid) is True
    bad = await api.post(f"/v1/sessions/{sid}/chat", json={**body, "remember": "nope"})
    assert bad.status_code == 422 and await _remember(db, sid) is True
    messages = (await api.get(f"/v1/sessions/{sid}")).json()["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["Plan my week"]  # as the client shows


async def test_openai_store_false_opens_a_chat_not_remembered(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    client = openai.AsyncOpenAI(
        base_url="http://orrery/v1", api_key=demo.api_key, http_client=api, max_retries=0
    )
    private: Any = [{"role": "user", "content": "Just between us: plan my week"}]
    raw = await client.chat.completions.with_raw_response.create(
        model="orrery", messages=private, store=False
    )
    sid = raw.headers["x-orrery-session"]
    assert await _remember(db, sid) is False
    again = await client.chat.completions.with_raw_response.create(
        model="orrery",
        messages=[*private, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "and?"}],
        store=True,
    )
    assert again.headers["x-orrery-session"] == sid and await _remember(db, sid) is False  # never back on

    kept: Any = [{"role": "user", "content": "Plan my month"}]
    raw = await client.chat.completions.with_raw_response.create(model="orrery", messages=kept)
    kept_sid = raw.headers["x-orrery-session"]
    assert await _remember(db, kept_sid) is True  # no `store`: remembered
    await client.chat.completions.create(
        model="orrery", messages=[*kept, {"role": "user", "content": "and?"}], store=False
    )
    assert await _remember(db, kept_sid) is False  # a later `store: false` switches it off

    named = (await api.post("/v1/sessions", json={})).json()["id"]
    await client.chat.completions.create(
        model="orrery", messages=kept, store=False, extra_headers={"X-Orrery-Session": named}
    )
    assert await _remember(db, named) is False
    bad = await api.post("/v1/chat/completions", json={"model": "orrery", "messages": kept, "store": "no"})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "store"  # OpenAI's shape
