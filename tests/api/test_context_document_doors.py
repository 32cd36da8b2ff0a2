"""Issue 52 §2: a project context document is designated through a door (REST and CLI), not only by
the demo loader: `is_context_document` on entity create and update."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from orrery.db.engine import Database
from orrery.repo import identity
from tests.support.cli import cli_environment, invoke


async def test_rest_designates_and_releases_the_context_document(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    async with db.transaction() as s:
        project = (await identity.create_project(s, demo.user_id, "Context doors")).id
    url = f"/v1/projects/{project}/entities"
    made = await api.post(url, json={"kind": "document", "name": "PRD", "is_context_document": True})
    assert made.status_code == 201, made.text
    prd = made.json()
    assert prd["is_context_document"] is True
    second = await api.post(url, json={"kind": "document", "name": "Brief", "is_context_document": True})
    assert second.status_code == 409, second.text
    task = await api.post(url, json={"kind": "task", "name": "Ship", "is_context_document": True})
    assert task.status_code == 422, task.text
    brief = (await api.post(url, json={"kind": "document", "name": "Brief"})).json()
    assert (
        await api.patch(f"/v1/entities/{brief['id']}", json={"is_context_document": True})
    ).status_code == 409
    released = await api.patch(f"/v1/entities/{prd['id']}", json={"is_context_document": False})
    assert released.status_code == 200 and released.json()["is_context_document"] is False
    moved = await api.patch(f"/v1/entities/{brief['id']}", json={"is_context_document": True})
    assert moved.status_code == 200 and moved.json()["is_context_document"] is True
    null = await api.patch(f"/v1/entities/{brief['id']}", json={"is_context_document": None})
    assert null.status_code == 422


@pytest.fixture
def cli_env(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from cli_environment(db_url, monkeypatch)


@pytest.mark.demo_db
def test_the_cli_designates_the_context_document(cli_env: None) -> None:
    demo = json.loads(invoke("demo", "load", "--json")[1])
    project = demo["project_id"]
    code, output = invoke(
        "entities", "create", "document", "Brief", "--context-document", "--project", project
    )
    assert code == 1 and "already has a context document" in output, output
    code, output = invoke("entities", "create", "document", "Brief", "--project", project, "--json")
    assert code == 0, output
    brief = json.loads(output)
    assert brief["is_context_document"] is False
    code, output = invoke("entities", "update", brief["id"], "--context-document")
    assert code == 1 and "already has a context document" in output, output
    code, output = invoke("entities", "update", demo["focus"]["document"], "--no-context-document", "--json")
    assert code == 0 and json.loads(output)["is_context_document"] is False, output
    code, output = invoke("entities", "update", brief["id"], "--context-document", "--json")
    assert code == 0 and json.loads(output)["is_context_document"] is True, output
    code, output = invoke("entities", "create", "task", "X", "--context-document", "--project", project)
    assert code == 1 and "only documents" in output, output
