"""The FastAPI application: lifespan (engine + schema check), error mapping, and routes."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from typing import Annotated

from fastapi import FastAPI, Query, Request
from fastapi_offline import FastAPIOffline

from backend import __version__
from backend.agents.orchestrator import Orchestrator
from backend.agents.preload import preload_provider
from backend.api import errors, front_door
from backend.api.deps import CurrentUser, ReadSessionDep
from backend.api.limits import MAX_INT
from backend.api.routes import chat as chat_routes
from backend.api.routes import extensions, openai_compat, resources, sessions, vercel
from backend.api.schemas import (
    EdgeOut,
    EntityOut,
    EntityWithEdges,
    Health,
    ProjectOut,
    ProjectSummaryOut,
    UserOut,
)
from backend.config import Settings, get_settings
from backend.db.engine import Database
from backend.db.migrations import current_revision, ensure_current
from backend.graph.cache import configure_linked_cache
from backend.memory.embedding_models import embedding_model
from backend.memory.embeddings import start_embedder_warmup
from backend.memory.history_cache import configure_history_cache
from backend.ops.wiring import install_operations, operations_running
from backend.repo import graph, identity
from backend.repo.summary import project_summary
from backend.vocabulary import EntityKind


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; the database is opened (and its schema checked) at startup."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_linked_cache(settings.linked_cache_ttl_seconds, settings.linked_cache_size)
        configure_history_cache(settings.history_cache_messages)
        db = Database.from_settings(settings)
        try:
            await ensure_current(db.engine)
            app.state.db, app.state.settings = db, settings
            app.state.orchestrator = orchestrator = Orchestrator(db, settings)
            # a real model's provider loads before the first request is accepted, in a worker thread:
            # an import racing with requests would still stall them (it holds the GIL)
            await preload_provider(settings.model, settings)
            if not embedding_model(settings).remote:  # loaded before the first message is stored
                app.state.embedder = start_embedder_warmup()
            async with operations_running(app, orchestrator):
                try:
                    yield
                finally:
                    await orchestrator.close()  # turns in flight finish first
        finally:
            await db.dispose()

    app = FastAPIOffline(  # /docs and /redoc from local assets: they work offline
        title="Orrery", version=__version__, lifespan=lifespan, responses=errors.ERROR_RESPONSES
    )
    errors.install(app)
    front_door.install(app, settings)
    install_operations(app, settings)
    app.include_router(sessions.router)
    app.include_router(chat_routes.router)
    app.include_router(openai_compat.router)
    app.include_router(resources.router)
    app.include_router(vercel.router)
    app.include_router(extensions.router)

    @app.get("/health", response_model=Health)
    async def health(request: Request) -> Health:
        """Liveness and the database's schema revision (no authentication)."""
        db: Database = request.app.state.db
        return Health(status="ok", database=db.dialect, revision=await current_revision(db.engine))

    @app.get("/v1/me", response_model=UserOut)
    async def me(user: CurrentUser) -> UserOut:
        """The user the API key belongs to."""
        return UserOut.model_validate(user)

    @app.get("/v1/projects", response_model=list[ProjectOut])
    async def projects(user: CurrentUser, session: ReadSessionDep) -> list[ProjectOut]:
        """The caller's projects, newest first."""
        return [ProjectOut.model_validate(p) for p in await identity.list_projects(session, user.id)]

    @app.get("/v1/projects/{project_id}", response_model=ProjectSummaryOut)
    async def project(project_id: str, user: CurrentUser, session: ReadSessionDep) -> ProjectSummaryOut:
        """A project's summary: counts by kind and state, edges, knowledge base, activity."""
        return ProjectSummaryOut(**asdict(await project_summary(session, user.id, project_id)))

    @app.get("/v1/projects/{project_id}/entities", response_model=list[EntityOut])
    async def entities(
        project_id: str,
        user: CurrentUser,
        session: ReadSessionDep,
        kind: EntityKind | None = None,
        state: str | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0, le=MAX_INT)] = 0,
    ) -> list[EntityOut]:
        """A project's entities, newest first, filtered by kind and state."""
        rows = await graph.list_entities(
            session, user.id, project_id, kind=kind, state=state, limit=limit, offset=offset
        )
        return [EntityOut.model_validate(e) for e in rows]

    @app.get("/v1/entities/{entity_id}", response_model=EntityWithEdges)
    async def entity(entity_id: str, user: CurrentUser, session: ReadSessionDep) -> EntityWithEdges:
        """One entity and every edge touching it, in both directions."""
        found = await graph.get_entity(session, user.id, entity_id)
        edges = await graph.edges_of(session, user.id, found.id)
        return EntityWithEdges(
            entity=EntityOut.model_validate(found), edges=[EdgeOut.model_validate(e) for e in edges]
        )

    from backend.web import install_web

    install_web(app)
    _ = uuid  # ids arrive as strings so malformed ones answer 404, like unknown ones
    return app
