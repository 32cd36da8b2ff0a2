"""Workspace resources: entities and edges, the knowledge base, check-ins, the user summary, the
document index summary, and the context endpoints. Every route acts for the API key's user; another
user's ids answer 404."""

from __future__ import annotations

import uuid
from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import ConfigDict, Field, StrictBool

from orrery.api.errors import ERROR_RESPONSES
from orrery.api.graph_inputs import EdgeIn, EntityIn, EntityPatch
from orrery.api.resource_schemas import (
    BuildOut,
    CheckInCreatedOut,
    CheckInOut,
    CollectionOut,
    DocsSummaryOut,
    EntryCreatedOut,
    IndexOut,
    KbSearchOut,
    LinkedOut,
    LoadOut,
    RelationOut,
    UserSummaryOut,
)
from orrery.api.schemas import EdgeOut, EntityOut
from orrery.graph.templates import ExcludeSpec, IncludeSpec
from orrery.knowledge.entries import FullEntry
from orrery.repo import graph, knowledge, memory
from orrery.repo.knowledge import CODE_PATTERN, SLUG_PATTERN
from orrery.services.deps import CurrentUser, ReadSessionDep, SettingsDep, WriteSessionDep
from orrery.services.limits import INTEGER_ONLY, JsonInt, JsonObject, Text
from orrery.validation import StorableBody
from orrery.vocabulary import EntityKind

router = APIRouter(prefix="/v1", tags=["workspace"], responses=ERROR_RESPONSES)


@router.post(
    "/projects/{project_id}/entities", status_code=201, response_model=EntityOut, summary="Create an entity"
)
async def create_entity(project_id: str, body: EntityIn, user: CurrentUser, session: WriteSessionDep) -> Any:
    """Create a task, plan, goal, milestone, document or output."""
    return await graph.create_entity(session, user.id, project_id, graph.EntitySpec(**body.model_dump()))


@router.patch("/entities/{entity_id}", response_model=EntityOut, summary="Change an entity")
async def patch_entity(entity_id: str, body: EntityPatch, user: CurrentUser, session: WriteSessionDep) -> Any:
    """Change fields; invalid values are refused before anything is written."""
    return await graph.update_entity(session, user.id, entity_id, **body.model_dump(exclude_unset=True))


@router.delete("/entities/{entity_id}", status_code=204, summary="Delete an entity and its edges")
async def delete_entity(entity_id: str, user: CurrentUser, session: WriteSessionDep) -> None:
    """Delete an entity; its edges go with it."""
    await graph.delete_entity(session, user.id, entity_id)


@router.post("/edges", status_code=201, response_model=EdgeOut, summary="Create an edge")
async def create_edge(body: EdgeIn, user: CurrentUser, session: WriteSessionDep) -> Any:
    """Link two entities of one project (invalidates both ends' linked-entity cache)."""
    return await graph.create_edge(session, user.id, body.src_id, body.rel, body.dst_id, body.props)


@router.delete("/edges/{edge_id}", status_code=204, summary="Delete an edge")
async def delete_edge(edge_id: str, user: CurrentUser, session: WriteSessionDep) -> None:
    """Remove a link (invalidates both ends' linked-entity cache)."""
    await graph.delete_edge(session, user.id, edge_id)


@router.get(
    "/entities/{entity_id}/linked", response_model=LinkedOut, summary="Everything linked to an entity"
)
async def linked(
    entity_id: str,
    user: CurrentUser,
    session: ReadSessionDep,
    filter_kind: EntityKind | Literal["all"] | None = None,
    max_per_type: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    """The linked-entity context (full mode, with descriptions)."""
    from orrery.graph.linked import load_linked_entities_context

    entity = await graph.get_entity(session, user.id, entity_id)
    result = await load_linked_entities_context(
        session,
        user.id,
        entity.id,
        entity.kind,
        max_per_type=max_per_type,
        include_descriptions=True,
        filter_kind=filter_kind,
    )
    return {**asdict(result), "total": result.total}


class BuildIn(StorableBody):
    """build_context arguments."""

    seeds: list[Annotated[Text, Field(max_length=100)]] = Field(min_length=1, max_length=20)
    budget: Annotated[int, Field(ge=1, le=32_000), INTEGER_ONLY] | None = None
    strategy: Literal["relevance", "breadth", "depth", "semantic"] | None = None
    format: Literal["structured", "narrative", "outline"] | None = None
    template: Text | None = Field(default=None, max_length=100)
    query: Text | None = Field(default=None, max_length=2_000)
    include: IncludeSpec | None = None
    exclude: ExcludeSpec | None = None
    existing_context: dict[str, Any] | None = Field(
        default=None, description="an earlier response of this endpoint, to continue it"
    )
    additional_budget: Annotated[int, Field(ge=1, le=32_000), INTEGER_ONLY] | None = None


@router.post("/context/build", response_model=BuildOut, summary="Token-budgeted graph context around seeds")
async def build(
    body: BuildIn, user: CurrentUser, session: ReadSessionDep, settings: SettingsDep
) -> dict[str, Any]:
    """The build_context response (query, context {primary, related, references, timeline},
    metadata, excluded, and the text, whose footer the budget counts)."""
    from orrery.context.builder import build_context, resolve_request
    from orrery.tokens import counter_for

    request = resolve_request(
        **body.model_dump(exclude={"include", "exclude"}),
        include=body.include,
        exclude=body.exclude,
        templates_dir=settings.templates_dir,
    )
    return await build_context(session, user.id, request, counter_for(settings.model))


class LoadIn(StorableBody):
    """load_context_for_task arguments."""

    project_id: uuid.UUID
    task_description: Text = Field(min_length=1, max_length=5_000)
    max_results: JsonInt = Field(default=10, ge=1, le=100)
    max_hops: JsonInt = Field(default=2, ge=0, le=5)


@router.post("/context/load-for-task", response_model=LoadOut, summary="Knowledge-base context for a task")
async def load_for_task(body: LoadIn, user: CurrentUser, session: ReadSessionDep) -> dict[str, Any]:
    """Entries, confidence, search terms, total found, and the Context Packet."""
    from orrery.knowledge.load_context import load_context_for_task
    from orrery.knowledge.packet import format_context_packet

    result = await load_context_for_task(
        session,
        user.id,
        body.project_id,
        body.task_description,
        max_results=body.max_results,
        max_hops=body.max_hops,
    )
    return {**result.as_dict(), "packet": format_context_packet(result)}


@router.get(
    "/projects/{project_id}/kb/search", response_model=KbSearchOut, summary="Search the knowledge base"
)
async def kb_search(
    project_id: str,
    q: Annotated[str, Query(min_length=1, max_length=500)],
    user: CurrentUser,
    session: ReadSessionDep,
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> dict[str, Any]:
    """Full-text search (FTS5 / tsvector)."""
    from orrery.knowledge.search import search_entries

    found = await search_entries(session, user.id, project_id, q, limit=limit)
    return {
        "terms": found.terms,
        "hits": [
            {
                "code": h.code,
                "name": h.name,
                "collection": h.collection_slug,
                "matched_terms": h.matched_terms,
            }
            for h in found.hits
        ],
    }


@router.get(
    "/projects/{project_id}/kb/collections",
    response_model=list[CollectionOut],
    summary="Knowledge-base collections",
)
async def kb_collections(project_id: str, user: CurrentUser, session: ReadSessionDep) -> list[dict[str, Any]]:
    """Collections by priority."""
    return [
        {"id": str(c.id), "slug": c.slug, "name": c.name, "priority": c.priority}
        for c in await knowledge.list_collections(session, user.id, project_id)
    ]


class CollectionIn(StorableBody):
    """A new collection."""

    slug: Text = Field(min_length=1, max_length=64, pattern=SLUG_PATTERN.pattern)
    name: Text = Field(min_length=1, max_length=200)
    priority: Annotated[int, Field(ge=0, le=1000), INTEGER_ONLY] | None = None


@router.post(
    "/projects/{project_id}/kb/collections",
    status_code=201,
    response_model=CollectionOut,
    summary="Create a collection",
)
async def create_collection(
    project_id: str, body: CollectionIn, user: CurrentUser, session: WriteSessionDep
) -> dict[str, Any]:
    """Create a collection (priority defaults to the standard ranking for known slugs)."""
    c = await knowledge.create_collection(
        session, user.id, project_id, body.slug, body.name, priority=body.priority
    )
    return {"id": str(c.id), "slug": c.slug, "name": c.name, "priority": c.priority}


class EntryIn(StorableBody):
    """A new entry."""

    collection_id: uuid.UUID
    code: Text = Field(min_length=1, max_length=32, pattern=CODE_PATTERN.pattern)
    name: Text = Field(min_length=1, max_length=300, pattern=r"\S")
    description: Text | None = Field(default=None, max_length=20_000)
    data: JsonObject = Field(default_factory=dict)


@router.post(
    "/kb/entries", status_code=201, response_model=EntryCreatedOut, summary="Create a knowledge-base entry"
)
async def create_entry(body: EntryIn, user: CurrentUser, session: WriteSessionDep) -> dict[str, Any]:
    """Create an entry with a unique code such as BR-012."""
    e = await knowledge.create_entry(
        session, user.id, body.collection_id, body.code, body.name, body.description, body.data
    )
    return {"id": str(e.id), "code": e.code, "name": e.name}


@router.get(
    "/projects/{project_id}/kb/entries/{code}",
    response_model=FullEntry,
    summary="One entry with its relations",
)
async def get_entry(project_id: str, code: str, user: CurrentUser, session: ReadSessionDep) -> dict[str, Any]:
    """The entry in full."""
    from orrery.knowledge.entries import get_entry as read

    return asdict(await read(session, user.id, project_id, code))


CODE_PATH = r"^\s*[A-Za-z0-9_.][A-Za-z0-9_./@+-]*\s*$"
CodePath = Annotated[
    Text,
    Field(
        max_length=300,
        pattern=CODE_PATH,
        json_schema_extra={"pattern": CODE_PATH, "not": {"pattern": r"(^\s*|/)\.\.(/|\s*$)"}},
    ),
]
"""A relative file path inside the repository (no `..` segment), as `knowledge.entries` checks it."""


class EntryPatch(StorableBody):
    """The feedback loop: code paths to add, a correction, or both."""

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["add_code_paths"], "properties": {"add_code_paths": {"minItems": 1}}},
                {"required": ["correction"], "properties": {"correction": {"pattern": r"\S"}}},
            ]
        }
    )

    add_code_paths: list[CodePath] | None = Field(default=None, max_length=50)
    correction: Text | None = Field(
        default=None, max_length=1_000, description="A correction; `null` is the same as leaving it out."
    )


@router.patch(
    "/projects/{project_id}/kb/entries/{code}",
    response_model=FullEntry,
    summary="Add code paths or a correction",
)
async def patch_entry(
    project_id: str, code: str, body: EntryPatch, user: CurrentUser, session: WriteSessionDep
) -> dict[str, Any]:
    """Recorded with provenance."""
    from orrery.knowledge.entries import update_entry

    return asdict(
        await update_entry(
            session, user.id, project_id, code, add_code_paths=body.add_code_paths, correction=body.correction
        )
    )


@router.delete("/projects/{project_id}/kb/entries/{code}", status_code=204, summary="Delete an entry")
async def delete_entry(project_id: str, code: str, user: CurrentUser, session: WriteSessionDep) -> None:
    """Delete an entry with its relations (the full-text index follows)."""
    await knowledge.delete_entry(session, user.id, project_id, code.strip().upper())


class RelationIn(StorableBody):
    """A typed link between entries."""

    src_entry_id: uuid.UUID
    rel_type: Text = Field(min_length=2, max_length=64, pattern=r"^[a-z][a-z_]{1,63}$")
    dst_entry_id: uuid.UUID


@router.post("/kb/relations", status_code=201, response_model=RelationOut, summary="Relate two entries")
async def relate(body: RelationIn, user: CurrentUser, session: WriteSessionDep) -> dict[str, Any]:
    """Create `src --rel_type--> dst`."""
    r = await knowledge.relate_entries(session, user.id, body.src_entry_id, body.rel_type, body.dst_entry_id)
    return {"id": str(r.id), "rel_type": r.rel_type}


@router.get(
    "/projects/{project_id}/docs", response_model=DocsSummaryOut, summary="What the document index holds"
)
async def docs_summary(project_id: str, user: CurrentUser, session: ReadSessionDep) -> dict[str, Any]:
    """The document index summary (404 with instructions when there is none)."""
    from orrery.docs.index import get_context_summary

    return await get_context_summary(session, user.id, project_id)


class ReindexIn(StorableBody):
    """Re-index options."""

    force: StrictBool = False


@router.post(
    "/projects/{project_id}/docs/index",
    response_model=IndexOut,
    summary="Re-index the project's docs folder",
)
async def docs_reindex(
    project_id: str, body: ReindexIn, user: CurrentUser, session: WriteSessionDep, settings: SettingsDep
) -> dict[str, Any]:
    """Re-chunk the folder indexed before with `orrery docs index PATH`, or index `ORRERY_DOCS_DIR`
    the first time (the server never takes a path from a request); skipped when nothing changed
    unless `force`."""
    from orrery.docs.index import index_docs

    result = await index_docs(session, user.id, project_id, force=body.force, default_root=settings.docs_dir)
    return result.as_dict()


class CheckInIn(StorableBody):
    """A check-in."""

    note: Text | None = Field(default=None, max_length=5_000)
    mood: Annotated[int, Field(ge=1, le=5), INTEGER_ONLY] | None = None
    project_id: uuid.UUID | None = None
    goal_id: uuid.UUID | None = None


@router.post("/check-ins", status_code=201, response_model=CheckInCreatedOut, summary="Record a check-in")
async def check_in(body: CheckInIn, user: CurrentUser, session: WriteSessionDep) -> dict[str, Any]:
    """Record that the person showed up."""
    c = await memory.add_check_in(
        session, user.id, note=body.note, mood=body.mood, project_id=body.project_id, goal_id=body.goal_id
    )
    return {"id": str(c.id), "created_at": c.created_at.isoformat()}


@router.get("/check-ins", response_model=list[CheckInOut], summary="Recent check-ins")
async def check_ins(
    user: CurrentUser, session: ReadSessionDep, limit: Annotated[int, Query(ge=1, le=200)] = 20
) -> list[dict[str, Any]]:
    """Newest first."""
    return [
        {"id": str(c.id), "note": c.note, "mood": c.mood, "created_at": c.created_at.isoformat()}
        for c in await memory.recent_check_ins(session, user.id, limit)
    ]


@router.get("/me/summary", response_model=UserSummaryOut, summary="What has been learned about the caller")
async def user_summary(user: CurrentUser, session: ReadSessionDep) -> dict[str, Any]:
    """Patterns, wins and struggles (empty lists before anything is learned)."""
    s = await memory.get_user_summary(session, user.id)
    if s is None:
        return {"patterns": [], "wins": [], "struggles": [], "updated_at": None}
    return {
        "patterns": s.patterns,
        "wins": s.wins,
        "struggles": s.struggles,
        "updated_at": s.updated_at.isoformat(),
    }
