"""The web app served at `/`: server-rendered Jinja2 pages, htmx (vendored) for partial updates and
one small ES module for the streamed chat. No Node toolchain, nothing loaded from a CDN."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parent / "static"


def install_web(app: FastAPI) -> None:
    """Mount the pages, the form actions and the static files on the API app (and give the API's
    documentation pages the same security headers)."""
    from orrery.web import actions, auth, facts, memory_choices, pages
    from orrery.web.docs_headers import DocsPageHeaders

    app.add_middleware(DocsPageHeaders)  # /docs and /redoc: the pages' security headers
    app.include_router(auth.router)
    app.include_router(pages.router)
    app.include_router(actions.router)
    app.include_router(memory_choices.router)
    app.include_router(facts.router)
    app.mount("/web-static", StaticFiles(directory=STATIC_DIR), name="web-static")
