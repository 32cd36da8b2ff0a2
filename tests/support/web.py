"""Signing a test client in to the web app as a browser does: load the form (its login token and
cookie), then post it."""

from __future__ import annotations

import re

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
