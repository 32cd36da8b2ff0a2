"""The HTTP API: authentication, user scoping and error mapping."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.migrations import head_revision
from orrery.errors import DatabaseNotMigratedError
from orrery.repo import identity
from tests.conftest import settings_for


@pytest.fixture
async def seeded(db: Database, settings: Settings, demo: Any) -> dict[str, Any]:
    async with db.transaction() as s:
        stranger = await identity.create_user(s, "stranger@example.org", "Stranger")
        _, stranger_key = await identity.issue_api_key(s, stranger.id, "k", settings.secret_key)
    return {"demo": demo, "stranger_key": stranger_key}


@pytest.fixture
def client(settings: Settings, seeded: dict[str, Any]) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as c:
        yield c


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_health_reports_revision(client: TestClient) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok" and body["revision"] == head_revision()


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "missing API key"),
        ({"Authorization": "Basic abc"}, "Bearer"),
        ({"X-API-Key": "nope"}, "malformed"),
    ],
)
def test_requests_without_a_valid_key_get_401(
    client: TestClient, headers: dict[str, str], message: str
) -> None:
    response = client.get("/v1/me", headers=headers)
    assert response.status_code == 401 and message in response.json()["error"]["message"]


def test_owner_sees_project_summary_and_entities(client: TestClient, seeded: dict[str, Any]) -> None:
    demo = seeded["demo"]
    h = auth(demo.api_key)
    assert client.get("/v1/me", headers=h).json()["email"] == "maya@demo.orrery.dev"
    assert [p["id"] for p in client.get("/v1/projects", headers=h).json()] == [str(demo.project_id)]
    summary = client.get(f"/v1/projects/{demo.project_id}", headers=h).json()
    assert summary["entities"]["task"] >= 25
    goals = client.get(f"/v1/projects/{demo.project_id}/entities", params={"kind": "goal"}, headers=h).json()
    assert len(goals) >= 3 and {g["kind"] for g in goals} == {"goal"}
    focus = client.get(f"/v1/entities/{demo.focus['task']}", headers=h).json()
    assert focus["entity"]["name"] == "Finalize pricing page" and len(focus["edges"]) >= 15


def test_other_users_data_is_not_found(client: TestClient, seeded: dict[str, Any]) -> None:
    demo, h = seeded["demo"], auth(seeded["stranger_key"])
    assert client.get("/v1/projects", headers=h).json() == []
    for path in (
        f"/v1/projects/{demo.project_id}",
        f"/v1/projects/{demo.project_id}/entities",
        f"/v1/entities/{demo.focus['task']}",
        "/v1/entities/not-a-uuid",
    ):
        response = client.get(path, headers=h)
        assert response.status_code == 404 and "not found" in response.json()["error"]["message"]


def test_bad_filter_is_a_clear_422(client: TestClient, seeded: dict[str, Any]) -> None:
    demo = seeded["demo"]
    response = client.get(
        f"/v1/projects/{demo.project_id}/entities", params={"kind": "meeting"}, headers=auth(demo.api_key)
    )
    assert response.status_code == 422
    [detail] = response.json()["error"]["details"]
    assert detail["loc"] == ["query", "kind"] and "'task'" in detail["msg"]  # the kinds it takes


def test_app_refuses_to_start_on_unmigrated_database(empty_db_url: str) -> None:
    with (
        pytest.raises(DatabaseNotMigratedError, match="orrery db upgrade"),
        TestClient(create_app(settings_for(empty_db_url))),
    ):
        pass


def test_start_up_loads_the_token_encodings_a_turn_counts_with(
    settings: Settings, seeded: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading an encoding takes 0.3-0.6 s of CPU: the warm-up pays it, not the first turn that
    stores a message (the configured models' encodings) or counts its prompt (the model's)."""
    from orrery import tokens
    from orrery.memory.message_index import written_encodings

    loaded: list[str] = []
    real = tokens._encoding
    monkeypatch.setattr(tokens, "_encoding", lambda name: loaded.append(name) or real(name))
    with TestClient(create_app(settings)) as c:
        assert set(loaded) >= {*written_encodings(), tokens.encoding_name_for(settings.model)}
        before = len(loaded)
        made = c.post(
            "/v1/sessions",
            json={"project_id": str(seeded["demo"].project_id)},
            headers=auth(seeded["demo"].api_key),
        )
        reply = c.post(
            f"/v1/sessions/{made.json()['id']}/messages",
            json={"content": "hello"},
            headers={**auth(seeded["demo"].api_key), "Accept": "application/json"},
        )
        assert reply.status_code == 200
        assert set(loaded[before:]) <= set(loaded[:before])  # a turn asks for nothing new
