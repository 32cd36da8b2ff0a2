"""The offline model says a fact tool's refusal in words (issue 51): pydantic-ai hands a failed tool's
answer back as `{"error": ...}`, which a person must never see as the reply."""

from __future__ import annotations

from typing import Any

import httpx

from orrery.repo.facts import MAX_FACT_CHARS


async def test_a_refused_fact_is_said_in_words_not_json(api: httpx.AsyncClient, demo: Any) -> None:
    made = await api.post("/v1/sessions", json={"project_id": str(demo.project_id)})
    sid = made.json()["id"]
    long = "my sister lives in Porto " * 50
    turn = await api.post(
        f"/v1/sessions/{sid}/messages",
        json={"content": f"Remember that {long}"},
        headers={"Accept": "application/json"},
    )
    assert turn.status_code == 200, turn.text
    reply = turn.json()["reply"]
    assert reply.startswith(f"I could not do that: a fact is at most {MAX_FACT_CHARS} characters")
    assert "{" not in reply and '"error"' not in reply
    assert (await api.get("/v1/me/facts")).json() == []  # nothing remembered
