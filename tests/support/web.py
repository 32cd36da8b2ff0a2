"""Signing a test client in to the web app as a browser does: load the form (its login token and
cookie), then post it."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx


async def login_token(client: httpx.AsyncClient) -> str:
    """The sign-in form's login token (loading the form also sets its cookie on `client`)."""
    form = await client.get("/login")
    found = re.search(r'name="login_token" value="([0-9a-f]+)"', form.text)
    assert found, form.text[:500]
    return found.group(1)


async def sign_in(client: httpx.AsyncClient, api_key: str, **fields: str) -> httpx.Response:
    """Post the sign-in form with `api_key` (and e.g. `next`), as a browser would."""
    data = {"api_key": api_key, "login_token": await login_token(client), **fields}
    return await client.post("/login", data=data)


@asynccontextmanager
async def signed_in_client(settings: Any, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The web app started on `settings`, and a browser-like client signed in as the demo user."""
    from orrery.app.http import create_app

    application = create_app(settings)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://orrery") as client:
            assert (await sign_in(client, demo.api_key)).status_code == 303
            yield client
