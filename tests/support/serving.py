"""The app driven over HTTP in-process: the real ASGI stack and lifespan, a real database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI


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
