"""Listing, renaming and deleting chat sessions over HTTP, always scoped to the caller."""

from __future__ import annotations

from typing import Any

import httpx

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import chat, identity
from tests.support.factories import make_user


async def _stranger(db: Database, settings: Settings) -> tuple[str, str]:
    """Another user with a key and a session of their own: (api key, session id)."""
    async with db.transaction() as s:
        user = await make_user(s, "Eve")
        _, key = await identity.issue_api_key(s, user.id, "k", settings.secret_key)
        record = await chat.create_session(s, user.id, title="Eve's secret")
        return key, str(record.id)


async def test_list_is_newest_first_with_title_focus_and_pages(api: httpx.AsyncClient, demo: Any) -> None:
    focus = {"kind": "task", "id": str(demo.focus["task"])}
    first = (await api.post("/v1/sessions", json={"project_id": str(demo.project_id), "title": "One"})).json()
    second = (
        await api.post(
            "/v1/sessions", json={"project_id": str(demo.project_id), "focus": focus, "title": "Two"}
        )
    ).json()
    page = (await api.get("/v1/sessions", params={"limit": 2})).json()
    assert [i["id"] for i in page["items"]] == [second["id"], first["id"]]
    top = page["items"][0]
    assert top["title"] == "Two" and top["project_name"] == "Atlas 2.0 Launch"
    assert top["focus"]["kind"] == "task" and top["focus"]["name"] == "Finalize pricing page"
    assert top["focus"]["state"] == "in_progress"
    assert page["next_offset"] == 2  # the demo's own session is on the next page
    rest = (await api.get("/v1/sessions", params={"limit": 2, "offset": 2})).json()
    assert len(rest["items"]) == 1 and rest["next_offset"] is None
    assert (await api.get("/v1/sessions", params={"limit": 0})).status_code == 422
    assert (await api.get("/v1/sessions", params={"offset": 2**63})).status_code == 422


async def test_rename_and_delete(api: httpx.AsyncClient, demo: Any) -> None:
    sid = (await api.post("/v1/sessions", json={"title": "Old"})).json()["id"]
    renamed = await api.patch(f"/v1/sessions/{sid}", json={"title": "  New   name "})
    assert renamed.status_code == 200 and renamed.json()["title"] == "New name"
    assert (await api.patch(f"/v1/sessions/{sid}", json={"title": ""})).json()["title"] is None
    assert (await api.patch(f"/v1/sessions/{sid}", json={"title": "x" * 301})).status_code == 422
    assert (await api.delete(f"/v1/sessions/{sid}")).status_code == 204
    assert (await api.get(f"/v1/sessions/{sid}")).status_code == 404
    assert (await api.delete(f"/v1/sessions/{sid}")).status_code == 404
    assert sid not in [i["id"] for i in (await api.get("/v1/sessions")).json()["items"]]


async def test_another_users_session_is_not_found(
    api: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    key, foreign = await _stranger(db, settings)
    assert foreign not in [i["id"] for i in (await api.get("/v1/sessions")).json()["items"]]
    assert (await api.patch(f"/v1/sessions/{foreign}", json={"title": "mine"})).status_code == 404
    assert (await api.delete(f"/v1/sessions/{foreign}")).status_code == 404
    assert (await api.delete("/v1/sessions/not-a-uuid")).status_code == 404
    theirs = await api.get("/v1/sessions", headers={"Authorization": f"Bearer {key}"})
    assert [i["title"] for i in theirs.json()["items"]] == ["Eve's secret"]  # untouched
