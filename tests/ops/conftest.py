"""An app on the demo workspace, driven over HTTP in-process (the real ASGI stack, real database)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from backend.api.app import create_app
from backend.config import Settings
from backend.db.engine import Database
from backend.demo.workspace import load_demo


@pytest.fixture
async def demo(db: Database, settings: Settings) -> Any:
    return await load_demo(db, settings.secret_key)


@asynccontextmanager
async def serving(app: FastAPI, api_key: str) -> AsyncIterator[httpx.AsyncClient]:
    """Run the app's lifespan and yield a client authenticated with `api_key`."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {api_key}"}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://orrery", headers=headers
        ) as client:
            yield client


@pytest.fixture
async def api(settings: Settings, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with serving(create_app(settings), demo.api_key) as client:
        yield client


async def focused_session(api: httpx.AsyncClient, demo: Any) -> str:
    """A session focused on the demo task (the offline planner calls a graph tool there)."""
    response = await api.post(
        "/v1/sessions",
        json={"project_id": str(demo.project_id), "focus": {"kind": "task", "id": str(demo.focus["task"])}},
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def sse_events(body: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out
