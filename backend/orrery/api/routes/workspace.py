"""The caller's workspace: health, who they are, their projects, and a project's entities.
Ids arrive as strings, so a malformed one answers 404 like an unknown one."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from orrery.api.errors import ERROR_RESPONSES
from orrery.api.schemas import (
    EdgeOut,
    EntityOut,
    EntityWithEdges,
    Health,
    ProjectOut,
    ProjectSummaryOut,
    UserOut,
)
from orrery.db.engine import Database
from orrery.db.migrations import current_revision
from orrery.db.writable import unwritable
from orrery.memory.embeddings import local_status
from orrery.repo import graph, identity
from orrery.repo.summary import project_summary
from orrery.services.deps import CurrentUser, ReadSessionDep
from orrery.services.limits import MAX_INT
from orrery.vocabulary import EntityKind

router = APIRouter(responses=ERROR_RESPONSES)


@router.get("/health", response_model=Health, responses={503: {"model": Health}})
async def health(request: Request) -> Any:
    """Liveness, the database's schema revision and the embedder's state (no authentication); 503
    with `status: read_only` while a SQLite database cannot be written (every write would be a 503)."""
    db: Database = request.app.state.db
    remote = request.app.state.orchestrator.embedding.remote
    embeddings = "remote" if remote else local_status()
    revision = await current_revision(db.engine)
    reason = unwritable(request.app.state.settings.database_url)
    status = "ok" if reason is None else "read_only"
    answer = Health(
        status=status, database=db.dialect, revision=revision, embeddings=embeddings, reason=reason
    )
    if reason is None:
        return answer
    return JSONResponse(answer.model_dump(), status_code=503, headers={"Retry-After": "30"})


@router.get("/v1/me", response_model=UserOut)
async def me(user: CurrentUser) -> UserOut:
    """The user the API key belongs to."""
    return UserOut.model_validate(user)


@router.get("/v1/projects", response_model=list[ProjectOut])
async def projects(user: CurrentUser, session: ReadSessionDep) -> list[ProjectOut]:
    """The caller's projects, newest first."""
    return [ProjectOut.model_validate(p) for p in await identity.list_projects(session, user.id)]


@router.get("/v1/projects/{project_id}", response_model=ProjectSummaryOut)
async def project(project_id: str, user: CurrentUser, session: ReadSessionDep) -> ProjectSummaryOut:
    """A project's summary: counts by kind and state, edges, knowledge base, activity."""
    return ProjectSummaryOut(**asdict(await project_summary(session, user.id, project_id)))


@router.get("/v1/projects/{project_id}/entities", response_model=list[EntityOut])
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


@router.get("/v1/entities/{entity_id}", response_model=EntityWithEdges)
async def entity(entity_id: str, user: CurrentUser, session: ReadSessionDep) -> EntityWithEdges:
    """One entity and every edge touching it, in both directions."""
    found = await graph.get_entity(session, user.id, entity_id)
    edges = await graph.edges_of(session, user.id, found.id)
    return EntityWithEdges(
        entity=EntityOut.model_validate(found), edges=[EdgeOut.model_validate(e) for e in edges]
    )
