"""The HTTP application: the API and web doors on one FastAPI app, with its lifespan (engine,
schema check, orchestrator, warm-up, background jobs) and operations (logs, traces, metrics)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from orrery import __version__
from orrery.agents.credentials import log_credentials
from orrery.agents.openai_http import pooled as pooled_clients
from orrery.agents.orchestrator import Orchestrator
from orrery.agents.preload import preload_provider
from orrery.api import errors, front_door
from orrery.api.routes import (
    capture,
    chat,
    extensions,
    facts,
    memory_choices,
    openai_compat,
    openai_responses,
    resources,
    sessions,
    vercel,
    workspace,
)
from orrery.app.wiring import install_operations, operations_running
from orrery.config import Settings, get_settings
from orrery.db.engine import Database
from orrery.db.migrations import ensure_current
from orrery.db.writable import unwritable
from orrery.memory.embedding_models import embedding_model
from orrery.memory.embeddings import start_embedder_warmup
from orrery.memory.history_cache import configure_history_cache
from orrery.memory.message_index import written_encodings
from orrery.model_map import model_map
from orrery.ops.heap import release_free_memory
from orrery.plugins import ensure_plugins
from orrery.repo.linked_cache import configure_linked_cache
from orrery.tokens import encoding_name_for, load_encodings
from orrery.web import install_web

log = logging.getLogger("orrery.app")

ROUTERS = (
    capture,
    sessions,
    chat,
    openai_compat,
    openai_responses,
    resources,
    facts,
    vercel,
    extensions,
    workspace,
    memory_choices,
)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; the database is opened (and its schema checked) at startup. Plugins register
    here, once per process, before any route reads the registries."""
    settings = settings or get_settings()
    ensure_plugins(settings)
    app = FastAPIOffline(  # /docs and /redoc from local assets: they work offline
        title="Orrery", version=__version__, lifespan=_lifespan(settings), responses=errors.ERROR_RESPONSES
    )
    errors.install(app)
    front_door.install(app, settings)
    install_operations(app, settings)
    for module in ROUTERS:
        app.include_router(module.router)
    install_web(app)
    return app


def _lifespan(settings: Settings) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_linked_cache(settings.linked_cache_ttl_seconds, settings.linked_cache_size)
        configure_history_cache(settings.history_cache_mb)
        db = Database.from_settings(settings)
        try:
            await ensure_current(db.engine)
            reason = unwritable(settings.database_url)
            if reason is not None:  # one line now, rather than a 503 on every write later
                log.warning("%s: the server answers reads, every write is a 503 until it is writable", reason)
            app.state.db, app.state.settings = db, settings
            app.state.orchestrator = orchestrator = Orchestrator(db, settings)
            # a real model's provider loads before the first request is accepted, in a worker thread:
            # an import racing with requests would still stall them (it holds the GIL)
            await preload_provider(settings.model, settings)
            log_credentials(settings)  # one line: the configured model's key is set, or which is not
            # what a stored message is counted in, and what a turn counts with
            encodings = {*written_encodings(), encoding_name_for(settings.model)}
            await asyncio.to_thread(load_encodings, encodings)
            await asyncio.to_thread(model_map)  # windows and prices, read once (not inside a turn)
            if not embedding_model(settings).remote:  # loaded before the first message is stored
                app.state.embedder = start_embedder_warmup()
                app.state.embedder.add_done_callback(lambda _: release_free_memory())
            else:
                release_free_memory()  # the warm-up's transients (an encoding's dict, the map)
            async with pooled_clients(), operations_running(app, orchestrator):
                try:
                    yield
                finally:
                    await orchestrator.close()  # turns in flight finish first
        finally:
            await db.dispose()

    return lifespan
