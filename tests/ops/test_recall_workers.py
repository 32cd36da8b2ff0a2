"""Two server processes on one database: a chat deleted, or set not to be remembered, through one
process is never recalled by the other on its next turn, though that process held a copy of it."""

from __future__ import annotations

import os
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from orrery.db.engine import Database
from orrery.db.models import ChatSession
from orrery.demo.workspace import load_demo
from tests.ops.test_multiprocess import _in_database, servers

QUESTION = "When does the Kirkwall ferry leave?"


def _recalled(base: str, sid: str, headers: dict[str, str]) -> set[str]:
    # the view the turn answering the question had (`at`: its seq), rebuilt now
    context = httpx.get(
        f"{base}/v1/sessions/{sid}/context", params={"at": 1}, headers=headers, timeout=60
    ).json()
    section = next(s for s in context["receipt"]["sections"] if s["name"] == "earlier_chats")
    return {item["chat_id"] for item in section["included"]}


def _chat(base: str, project: str, headers: dict[str, str], text: str) -> str:
    sid = str(httpx.post(f"{base}/v1/sessions", json={"project_id": project}, headers=headers).json()["id"])
    sent = httpx.post(
        f"{base}/v1/sessions/{sid}/messages", json={"content": text}, headers=headers, timeout=60
    )
    assert sent.status_code == 200, sent.text
    return sid


@pytest.mark.demo_db
def test_a_change_on_one_worker_is_seen_by_the_other_on_its_next_turn(db_url: str) -> None:
    demo: Any = _in_database(db_url, lambda database: load_demo(database, "test-secret"))
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "ORRERY_ENV": "test",
        "ORRERY_SECRET_KEY": "test-secret",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    headers = {"Authorization": f"Bearer {demo.api_key}", "Accept": "application/json"}
    project = str(demo.project_id)
    with servers(env, 2) as (first, second):
        ferry = _chat(first, project, headers, "Note: the Kirkwall ferry leaves at 7:15 from pier 3.")
        quiet = _chat(first, project, headers, "Note: the Kirkwall ferry also runs at 9:40 on Sundays.")
        asking = _chat(second, project, headers, QUESTION)
        assert {ferry, quiet} <= _recalled(second, asking, headers)  # the second process now holds both

        deleted = httpx.delete(f"{first}/v1/sessions/{ferry}", headers=headers)
        assert deleted.status_code in (200, 204), deleted.text

        async def forget(database: Database) -> None:
            async with database.transaction() as s:
                await s.execute(
                    update(ChatSession).where(ChatSession.id == uuid.UUID(quiet)).values(remember=False)
                )

        _in_database(db_url, forget)
        recalled = _recalled(second, asking, headers)
        assert ferry not in recalled and quiet not in recalled
