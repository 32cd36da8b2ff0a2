"""Helpers for the operations tests (the `demo` and `api` fixtures live in tests/conftest.py)."""

from __future__ import annotations

import json
from typing import Any

import httpx


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
