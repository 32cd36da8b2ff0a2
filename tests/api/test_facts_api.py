"""`/v1/me/facts` and forgetting a chat over HTTP: two people in one shared project, each sees,
corrects and forgets only their own facts; another's fact id answers 404 on every route."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import select

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import Job
from orrery.repo import chat, facts, identity, memory
from tests.support.factories import make_user


async def _colleague(db: Database, settings: Settings, demo: Any) -> tuple[str, str, str]:
    """Eve, an editor of the demo's project, with a chat, a fact said in it and a key:
    (key, her fact id, her chat id)."""
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
        await identity.add_member(s, demo.user_id, demo.project_id, eve.id, "editor")
        _, key = await identity.issue_api_key(s, eve.id, "k", settings.secret_key)
        record = await chat.create_session(s, eve.id, project_id=demo.project_id)
        fact, _ = await facts.create_fact(
            s, eve.id, "Eve's sister lives in Porto", source_session_id=record.id
        )
        return key, str(fact.id), str(record.id)


async def test_another_persons_fact_is_not_found_and_never_listed(
    api: httpx.AsyncClient, db: Database, settings: Settings, demo: Any
) -> None:
    _, foreign, foreign_chat = await _colleague(db, settings, demo)
    mine = await api.post(
        "/v1/me/facts", json={"text": "Prefers morning check-ins", "subject": "Check-in time"}
    )
    assert mine.status_code == 201
    body = mine.json()
    assert body["subject"] == "check-in time" and body["source"] is None and body["superseded_by"] is None
    listed = (await api.get("/v1/me/facts", params={"include_history": "true"})).json()
    assert [f["id"] for f in listed] == [body["id"]]
    assert (await api.get("/v1/me/facts", params={"session_id": foreign_chat})).json() == []
    assert (await api.get(f"/v1/me/facts/{foreign}")).status_code == 404
    assert (await api.patch(f"/v1/me/facts/{foreign}", json={"text": "mine now"})).status_code == 404
    assert (await api.delete(f"/v1/me/facts/{foreign}")).status_code == 404
    taken = await api.post("/v1/me/facts", json={"text": "x", "supersedes": foreign})
    assert taken.status_code == 404
    assert (await api.delete(f"/v1/sessions/{foreign_chat}?forget_facts=true")).status_code == 404
    async with db.sessions() as s:  # Eve's fact is untouched
        eve_fact = await s.get(facts.Fact, uuid.UUID(foreign))
        assert eve_fact is not None and eve_fact.text == "Eve's sister lives in Porto"
        assert eve_fact.superseded_at is None


async def test_supersede_lineage_edit_and_forget(api: httpx.AsyncClient) -> None:
    porto = (
        await api.post("/v1/me/facts", json={"text": "Sister lives in Porto", "subject": "sister"})
    ).json()
    lisbon = (
        await api.post(
            "/v1/me/facts",
            json={"text": "Sister moved to Lisbon", "subject": " Sister ", "valid_from": "2026-03-01"},
        )
    ).json()
    current = (await api.get("/v1/me/facts")).json()
    assert [f["text"] for f in current] == ["Sister moved to Lisbon"]
    history = {f["id"]: f for f in (await api.get("/v1/me/facts?include_history=true")).json()}
    assert history[porto["id"]]["superseded_by"] == lisbon["id"]
    assert history[porto["id"]]["superseded_at"] is not None
    assert lisbon["valid_from"].startswith("2026-03-01")
    by_id = await api.post("/v1/me/facts", json={"text": "Sister moved to Faro", "supersedes": lisbon["id"]})
    assert by_id.status_code == 201 and by_id.json()["subject"] == "sister"
    stale = await api.post("/v1/me/facts", json={"text": "again", "supersedes": lisbon["id"]})
    assert stale.status_code == 422 and "already replaced" in stale.text
    fixed = await api.patch(
        f"/v1/me/facts/{by_id.json()['id']}", json={"text": "Sister moved to Faro in May"}
    )
    assert fixed.status_code == 200 and fixed.json()["text"] == "Sister moved to Faro in May"
    cleared = await api.patch(f"/v1/me/facts/{by_id.json()['id']}", json={"subject": None})
    assert cleared.json()["subject"] is None and cleared.json()["text"] == "Sister moved to Faro in May"
    assert (await api.patch(f"/v1/me/facts/{porto['id']}", json={"text": None})).status_code == 422
    assert (await api.post("/v1/me/facts", json={"text": ""})).status_code == 422
    assert (await api.post("/v1/me/facts", json={"text": "   "})).status_code == 422
    assert (await api.get("/v1/me/facts/not-an-id")).status_code == 404
    assert (await api.delete(f"/v1/me/facts/{by_id.json()['id']}")).status_code == 204
    assert (await api.get("/v1/me/facts?include_history=true")).json() == []  # its history went too


async def test_forget_a_chat_with_its_facts_and_rebuild_the_summary(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    said, kept = [(await api.post("/v1/sessions", json={})).json()["id"] for _ in range(2)]
    async with db.transaction() as s:
        await facts.create_fact(s, demo.user_id, "Old flat on Rua Augusta", source_session_id=uuid.UUID(said))
        await facts.create_fact(s, demo.user_id, "Takes the 7:40 train", source_session_id=uuid.UUID(kept))
        summary = await memory.save_user_summary(
            s, demo.user_id, patterns=["Plans on Sundays"], wins=[], struggles=[]
        )
        summary.source_sessions = [said]
    listed = (await api.get("/v1/me/facts", params={"session_id": said})).json()
    assert [f["text"] for f in listed] == ["Old flat on Rua Augusta"]
    assert listed[0]["source"]["session_id"] == said
    assert (await api.delete(f"/v1/sessions/{said}?forget_facts=true")).status_code == 204
    assert [f["text"] for f in (await api.get("/v1/me/facts")).json()] == ["Takes the 7:40 train"]
    assert (await api.get("/v1/me/summary")).json()["patterns"] == []
    async with db.sessions() as s:
        jobs = (await s.execute(select(Job.kind, Job.dedupe_key))).all()
    assert ("refresh_user_summary", f"summary:{demo.user_id}") in jobs
    assert (await api.delete(f"/v1/sessions/{kept}")).status_code == 204  # facts stay by default
    assert [f["text"] for f in (await api.get("/v1/me/facts")).json()] == ["Takes the 7:40 train"]
