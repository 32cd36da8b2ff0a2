"""The web forms apply the rule every door applies (issue 51): text that cannot be stored (a NUL) is
refused with the API's words and nothing is written, on both dialects (PostgreSQL would otherwise
answer 503 mid-write); a form field that fails validation answers with the HTML error page (422), not
the JSON API's body."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import facts
from tests.support.web import signed_in_client

REFUSED = "text contains a NUL character (U+0000), which cannot be stored"


@pytest.fixture
async def client(settings: Settings, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in_client(settings, demo) as client:
        yield client


async def _csrf(client: httpx.AsyncClient) -> str:
    found = re.search(r'name="csrf-token" content="([0-9a-f]+)"', (await client.get("/me/facts")).text)
    assert found
    return found.group(1)


async def _stored(db: Database, demo: Any) -> list[str]:
    async with db.sessions() as s:
        return [f.text for f in await facts.list_facts(s, demo.user_id, history=True)]


async def test_a_nul_in_a_web_form_is_refused_as_every_door_refuses_it(
    client: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    token = await _csrf(client)
    before = await _stored(db, demo)
    added = await client.post("/me/facts", data={"csrf_token": token, "text": "Sister in\x00Porto"})
    assert added.status_code == 400 and added.headers["content-type"].startswith("text/html")
    assert REFUSED in added.text
    bearer = {"Authorization": f"Bearer {demo.api_key}"}
    api = await client.post("/v1/me/facts", json={"text": "Sister in\x00Porto"}, headers=bearer)
    assert api.status_code == 422 and REFUSED in api.text  # the same words through the API
    named = await client.post("/me/facts", data={"csrf_token": token, "text": "ok", "sub\x00ject": "x"})
    assert named.status_code == 400 and "a NUL character (U+0000)" in named.text  # a field's name too
    fragment = await client.post(
        "/me/facts", data={"csrf_token": token, "text": "\x00"}, headers={"HX-Request": "true"}
    )
    assert fragment.status_code == 400 and REFUSED in fragment.text and "<html" not in fragment.text
    assert await _stored(db, demo) == before  # nothing written


async def test_a_form_field_too_long_answers_with_the_html_page(
    client: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    token = await _csrf(client)
    before = await _stored(db, demo)
    long = "x" * (facts.MAX_FACT_CHARS + 1)
    refused = await client.post("/me/facts", data={"csrf_token": token, "text": long})
    assert refused.status_code == 422 and refused.headers["content-type"].startswith("text/html")
    assert "That did not work." in refused.text
    assert f"text: String should have at most {facts.MAX_FACT_CHARS} characters" in refused.text
    assert long not in refused.text  # the input is not echoed back
    assert await _stored(db, demo) == before
