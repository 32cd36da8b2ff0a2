"""What sits in front of every route: the request-size limit, CORS (opt-in), `/docs` served from
local assets with an Authorize button, and the documented error statuses."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from orrery.config import Settings
from orrery.services.limits import BodySizeLimit


def install(app: FastAPI, settings: Settings) -> None:
    """Add the middleware the settings ask for."""
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    origins = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    if origins:  # added last, so it is outermost: refusals (413) carry CORS headers too
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["X-Orrery-Session", "x-vercel-ai-ui-message-stream"],
            max_age=600,
        )
