"""Issue 52 §2: capture that can be carried out. The offline model's capture offer in an empty KB
leads to `create_entry` when the person explains and says yes (chat turns over HTTP); the REST door
and the CLI create entries with the same validation and provenance (person, chat, seq)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from orrery.db.engine import Database
from orrery.knowledge.entries import entry_revisions
from orrery.repo import identity
from orrery.roster import AGENTS
from tests.support.cli import cli_environment, invoke


async def _empty_project(db: Database, user_id: uuid.UUID) -> uuid.UUID:
    async with db.transaction() as s:
        return (await identity.create_project(s, user_id, f"empty {uuid.uuid4().hex[:6]}")).id


async def _turn(api: httpx.AsyncClient, sid: str, text: str) -> str:
    got = await api.post(
        f"/v1/sessions/{sid}/messages", json={"content": text}, headers={"Accept": "application/json"}
    )
    assert got.status_code == 200, got.text
    return str(got.json()["reply"])


async def _session(api: httpx.AsyncClient, project: uuid.UUID) -> str:
    made = await api.post("/v1/sessions", json={"project_id": str(project), "agent": "coach"})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


async def test_the_offline_model_captures_what_the_person_explains_when_they_say_yes(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    project = await _empty_project(db, demo.user_id)
    sid = await _session(api, project)
    offer = await _turn(api, sid, "How do annual plans pay for overage?")
    assert "capture it as knowledge" in offer and "create_entry" in offer
    asked = await _turn(api, sid, "Annual plans pay their overage quarterly, in arrears.")
    assert "Shall I capture this" in asked and "business-rules" in asked
    done = await _turn(api, sid, "Yes, please do.")
    assert "Captured as **BR-001**" in done, done
    entry = (await api.get(f"/v1/projects/{project}/kb/entries/BR-001")).json()
    assert entry["collection_slug"] == "business-rules"
    assert entry["description"] == "Annual plans pay their overage quarterly, in arrears."
    async with db.sessions() as s:
        (revision,) = await entry_revisions(s, demo.user_id, project, "BR-001")
    assert revision.user_id == demo.user_id and str(revision.session_id) == sid
    assert revision.changes["source_seq"] == 5  # the "yes" that asked for it
    # the knowledge is found afterwards: a new chat's first question loads it
    later = await _session(api, project)
    assert "BR-001" in await _turn(api, later, "How do annual plans pay overage?")


async def test_a_yes_with_the_explanation_captures_at_once_and_a_bare_yes_asks_what_to_write(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    project = await _empty_project(db, demo.user_id)
    sid = await _session(api, project)
    assert "capture it as knowledge" in await _turn(api, sid, "What does dunning mean here?")
    assert "What should the entry say?" in await _turn(api, sid, "Yes")
    done = await _turn(api, sid, "Dunning means the reminders we send before suspending an unpaid account.")
    assert "Shall I capture this" in done and "glossary" in done
    sid = await _session(api, project)
    await _turn(api, sid, "What does a grace period mean here?")
    done = await _turn(api, sid, "Yes: a grace period means 14 days of access after a failed payment.")
    assert "Captured as **GT-001**" in done, done


def test_every_agent_can_capture_and_improve_knowledge() -> None:
    for agent in AGENTS.values():
        assert {"create_entry", "update_entry", "load_context_for_task"} <= set(agent.tools), agent.id


async def test_rest_capture_validates_like_update_entry_and_records_provenance(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    url = f"/v1/projects/{demo.project_id}/kb/entries"
    sid = (await api.post("/v1/sessions", json={"project_id": str(demo.project_id)})).json()["id"]
    body = {
        "collection": "business-rules",
        "name": "Annual overage rule",
        "description": "Annual plans pay overage quarterly.",
        "code_paths": ["billing/annual.py"],
        "links": ["BR-012"],
        "session_id": sid,
        "seq": 1,
    }
    made = await api.post(url, json=body)
    assert made.status_code == 201, made.text
    entry = made.json()
    assert entry["code"] == "BR-022" and entry["data"]["code_paths"] == ["billing/annual.py"]
    assert [(r["code"], r["relation"]) for r in entry["related"]] == [("BR-012", "relates_to")]
    async with db.sessions() as s:
        (revision,) = await entry_revisions(s, demo.user_id, demo.project_id, entry["code"])
    assert str(revision.session_id) == sid and revision.changes["source_seq"] == 1
    for bad, status in [
        ({"code_paths": ["/etc/passwd"]}, 422),
        ({"code_paths": ["../up.py"]}, 422),
        ({"links": ["XX-999"]}, 422),
        ({"collection": "nope"}, 422),
        ({"code": "BR-012"}, 409),
        ({"name": "  "}, 422),
        ({"session_id": str(uuid.uuid4())}, 404),
    ]:
        got = await api.post(url, json=body | bad)
        assert got.status_code == status, (bad, got.status_code, got.text)
    stranger = await api.post(f"/v1/projects/{uuid.uuid4()}/kb/entries", json=body)
    assert stranger.status_code == 404


@pytest.fixture
def cli_env(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from cli_environment(db_url, monkeypatch)


@pytest.mark.demo_db
def test_the_cli_creates_an_entry(cli_env: None) -> None:
    demo = json.loads(invoke("demo", "load", "--json")[1])
    code, output = invoke(
        "kb", "create-entry", "glossary", "Grace period", "14 days of access after a failed payment.",
        "--link", "BR-012", "--code-path", "billing/grace.py", "--project", demo["project_id"], "--json",
    )  # fmt: skip
    assert code == 0, output
    entry = json.loads(output)
    assert entry["code"].startswith("GT-") and entry["data"]["code_paths"] == ["billing/grace.py"]
    code, output = invoke("kb", "create-entry", "nope", "X", "Y", "--project", demo["project_id"])
    assert code == 1 and "no collection 'nope'" in output
