"""Response bodies of the workspace routes (graph context, knowledge base, docs, check-ins), typed so the
OpenAPI document and `/docs` describe every success response."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from orrery.knowledge.load_context import ContextEntry, ExcludedEntry


class LinkedEntityOut(BaseModel):
    """One linked entity and the edge that links it."""

    kind: str
    id: uuid.UUID
    name: str
    state: str
    type_key: str | None
    relation: str
    direction: str
    edge_id: uuid.UUID | None
    description: str | None = None
    due_at: datetime | None = None
    is_context_document: bool = False


class LinkedOut(BaseModel):
    """Everything linked to an entity, grouped by kind, with full counts."""

    source_kind: str
    source_id: uuid.UUID
    source_name: str
    linked: dict[str, list[LinkedEntityOut]]
    counts: dict[str, int]
    truncated: bool
    total: int


class BuildQueryOut(BaseModel):
    """The resolved request."""

    model_config = ConfigDict(extra="allow")

    seeds: list[str]
    budget: int
    strategy: str
    format: str
    template: str | None
    query: str | None


class BuildMetadataOut(BaseModel):
    """Budget accounting; `seen_ids` continues the context with `existing_context`."""

    model_config = ConfigDict(extra="allow")

    tokens_used: int
    tokens_budget: int
    items_included: int
    items_excluded: int
    truncated: bool
    incremental: bool
    seen_ids: list[str]


class BuildOut(BaseModel):
    """A token-budgeted graph context."""

    query: BuildQueryOut
    context: dict[str, Any]
    """Seed 003's wrapper: primary, related, references (items linked by references /
    referenced_by) and timeline (the included items' last update and due date, newest first)."""
    primary: list[dict[str, Any]]
    related: list[dict[str, Any]]
    metadata: BuildMetadataOut
    excluded: list[dict[str, Any]]
    text: str


class LoadOut(BaseModel):
    """Knowledge-base context for a task, with the rendered Context Packet."""

    entries: list[ContextEntry]
    confidence: str
    search_terms: str
    total_found: int
    direct_hits: int
    kb_entries: int | None = None
    excluded: list[ExcludedEntry]
    """Entries found but cut by `max_results`, with the reason (as the CLI's `--json`)."""
    meaning: bool
    """Whether meaning (the local embedder) was a second signal; False: lexical only."""
    packet: str


class KbHitOut(BaseModel):
    """One search hit."""

    code: str
    name: str
    collection: str
    matched_terms: int


class KbSearchOut(BaseModel):
    """Search terms and hits, best first."""

    terms: list[str]
    hits: list[KbHitOut]


class CollectionOut(BaseModel):
    """A knowledge-base collection."""

    id: uuid.UUID
    slug: str
    name: str
    priority: int


class EntryCreatedOut(BaseModel):
    """A new entry."""

    id: uuid.UUID
    code: str
    name: str


class RelationOut(BaseModel):
    """A new relation between entries."""

    id: uuid.UUID
    rel_type: str


class DocsSummaryOut(BaseModel):
    """What the document index holds (`root` is the folder's name, never a server path)."""

    project_id: uuid.UUID
    total_stories: int
    epics: list[str]
    api_endpoint_count: int
    db_model_count: int
    schema_count: int
    last_chunked: datetime
    root: str
    index_version: str | None = None
    """The chunker that built the index (null for an index built before it was recorded)."""


class CheckInCreatedOut(BaseModel):
    """A recorded check-in."""

    id: uuid.UUID
    created_at: datetime


class CheckInOut(BaseModel):
    """A check-in, newest first."""

    id: uuid.UUID
    note: str | None
    mood: int | None
    created_at: datetime


class UserSummaryOut(BaseModel):
    """What has been learned about the caller."""

    patterns: list[str]
    wins: list[str]
    struggles: list[str]
    updated_at: datetime | None


class IndexOut(BaseModel):
    """Seed 004's `chunk_docs` result: `success`, then what indexing did."""

    success: bool
    chunks_created: int
    stories: int
    epics_indexed: list[str]
    api_endpoints_mapped: int
    db_models_mapped: int
    schemas_mapped: int
    skipped_unchanged: bool
