"""The document index in the database: (re)index a docs folder, and story-scoped reads from it.

Re-indexing replaces the project's chunks in one transaction (stale chunks never survive); an
unchanged folder (same content hash) is left alone unless `force` is given. Every read answers
`IndexMissingError` with instructions when the project has no index yet.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.models import DocChunk, DocIndex
from orrery.docs.chunker import CHUNKER_VERSION, chunk_folder
from orrery.docs.story import related_keys, spec_dict, story_context, story_dict
from orrery.errors import NotFoundError, ValidationError
from orrery.repo.scope import as_uuid, require_project
from orrery.text import stem, tokenize

INDEX_MISSING = "Document index not found. Run `orrery docs index` (or the index_docs tool) first."
SPEC_KINDS = {"api": "endpoint", "database": "model", "schema": "schema"}


NO_DOCS_FOLDER = (
    "This project has no document index yet and no docs folder is configured. Set ORRERY_DOCS_DIR to "
    "the docs folder (or to a folder with one sub-folder per project id) and call index_docs again, "
    "or run `orrery docs index PATH --project {project}`."
)


class NoDocsFolderError(ValidationError):
    """No index and no docs folder configured: what to set or run."""

    trusted = True  # fixed text and the project's id: reaches the model as written, no backslashes


def _configured_folder(default_root: Path | None, project_id: uuid.UUID) -> Path:
    """`<ORRERY_DOCS_DIR>/<project id>/` when it exists, else the folder itself; without a setting, a
    `ValidationError` that says how to configure one."""
    if default_root is None:
        raise NoDocsFolderError(NO_DOCS_FOLDER.format(project=project_id))
    per_project = default_root / str(project_id)
    return per_project if per_project.is_dir() else default_root


class IndexMissingError(NotFoundError):
    """The project has no document index yet."""

    trusted = True  # fixed text: "Run `orrery docs index` ..." reaches the model as written

    def __init__(self) -> None:
        super(NotFoundError, self).__init__(INDEX_MISSING)  # the plain message, without "... not found"
        self.kind, self.ident = "document index", None


class UnknownEpicError(NotFoundError):
    """No story names this epic; the message lists the epics that exist (`epic 'X' not found; epics: ...`)."""

    def __init__(self, epic: str, known: list[str]) -> None:
        super().__init__("epic", epic)
        self.args = (f"{self.args[0]}; epics: {', '.join(known) or 'none (no story names an epic)'}",)


@dataclass(frozen=True)
class IndexResult:
    """What indexing did."""

    chunks_created: int
    stories: int
    epics_indexed: list[str]
    api_endpoints_mapped: int
    db_models_mapped: int
    schemas_mapped: int
    skipped_unchanged: bool

    def as_dict(self) -> dict[str, Any]:
        """Seed 004's `chunk_docs` result (`success` first), as every door returns it."""
        return {"success": True, **asdict(self)}


async def index_docs(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    root: Path | str | None = None,
    *,
    force: bool = False,
    default_root: Path | None = None,
) -> IndexResult:
    """Chunk `root` (or the folder indexed last time, or for a first index `default_root` — the
    configured `ORRERY_DOCS_DIR`) into the project's index."""
    project = await require_project(session, as_uuid(user_id, "user"), project_id, write=True)
    existing = await session.get(DocIndex, project.id)
    if root is None:
        root = existing.root if existing is not None else _configured_folder(default_root, project.id)
    folder, chunks, digest = await asyncio.to_thread(_read_folder, root)
    if (
        existing is not None
        and existing.content_hash == digest
        and existing.root == str(folder)
        and not force
    ):
        return _result(existing.counts, skipped=True)
    await _replace_chunks(session, project.id, chunks)
    counts = _counts(chunks)
    if existing is None:
        session.add(DocIndex(project_id=project.id, root=str(folder), content_hash=digest, counts=counts))
    else:
        existing.root, existing.content_hash, existing.counts, existing.indexed_at = (
            str(folder),
            digest,
            counts,
            utcnow(),
        )
    await session.flush()
    return _result(counts, skipped=False)


async def _replace_chunks(session: AsyncSession, project_id: uuid.UUID, chunks: list[Any]) -> None:
    """Drop the project's chunks and insert the new ones in one statement (a re-index is whole)."""
    await session.execute(delete(DocChunk).where(DocChunk.project_id == project_id))
    if not chunks:
        return
    await session.execute(
        insert(DocChunk),
        [
            {
                "id": uuid.uuid4(),
                "project_id": project_id,
                "kind": c.kind,
                "key": c.key,
                "title": c.title[:300],
                "epic": c.epic,
                "content": c.content,
                "data": c.data,
                "keywords": c.keywords,
                "links": c.links,
                "source_path": c.source_path,
            }
            for c in chunks
        ],
    )


def _counts(chunks: list[Any]) -> dict[str, Any]:
    """What the index holds, stored with it (and shown by `orrery docs index`)."""
    return {
        "chunks": len(chunks),
        "stories": sum(c.kind == "story" for c in chunks),
        "endpoints": sum(c.kind == "endpoint" for c in chunks),
        "models": sum(c.kind == "model" for c in chunks),
        "schemas": sum(c.kind == "schema" for c in chunks),
        "epics": sorted({c.epic for c in chunks if c.epic}),
        "index_version": CHUNKER_VERSION,
    }


def _read_folder(root: Path | str) -> tuple[Path, list[Any], str]:
    folder = Path(root).expanduser().resolve()
    chunks, digest = chunk_folder(folder)
    return folder, chunks, digest


def _result(counts: dict[str, Any], *, skipped: bool) -> IndexResult:
    return IndexResult(
        counts["chunks"],
        counts["stories"],
        list(counts["epics"]),
        counts["endpoints"],
        counts["models"],
        counts["schemas"],
        skipped,
    )


async def _index(session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str) -> DocIndex:
    project = await require_project(session, as_uuid(user_id, "user"), project_id)
    index = await session.get(DocIndex, project.id)
    if index is None:
        raise IndexMissingError()
    return index


def _chunk_dict(c: DocChunk) -> dict[str, Any]:
    """A story or spec in seed 004's keys (`orrery.docs.story`)."""
    return story_dict(c) if c.kind == "story" else spec_dict(c)


async def get_context_for_story(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    story_id: str,
    *,
    include_related_stories: bool = True,
) -> dict[str, Any]:
    """Seed 004's story context: the story (content verbatim, inferred agents), its linked API specs,
    DB models and schemas with their source snippets verbatim, and related stories: a fixed number of
    queries, whatever the size of the index."""
    index = await _index(session, user_id, project_id)
    key = story_id.strip().upper()
    story = (
        await session.execute(
            select(DocChunk).where(
                DocChunk.project_id == index.project_id, DocChunk.kind == "story", DocChunk.key == key
            )
        )
    ).scalar_one_or_none()
    if story is None:
        raise NotFoundError("story", story_id)
    linked = (
        (
            await session.execute(
                select(DocChunk).where(
                    DocChunk.project_id == index.project_id,
                    DocChunk.key.in_(list(story.links)),
                    DocChunk.kind != "story",
                )
            )
        )
        .scalars()
        .all()
    )
    related: list[DocChunk] = []
    if include_related_stories:
        shared = related_keys(story, linked)
        rows = (
            (
                await session.execute(
                    select(DocChunk)
                    .where(
                        DocChunk.project_id == index.project_id,
                        DocChunk.kind == "story",
                        DocChunk.key.in_(shared)
                        | ((DocChunk.epic == story.epic) & (DocChunk.key != story.key)),
                    )
                    .order_by(DocChunk.key)
                )
            )
            .scalars()
            .all()
        )
        related = list(rows)
    order = {key: i for i, key in enumerate(story.links)}
    return story_context(story, sorted(linked, key=lambda c: order.get(c.key, 0)), related)


async def get_relevant_specs(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    spec_type: Literal["api", "database", "schema"],
    identifiers: list[str],
) -> dict[str, Any]:
    """Specs by identifier: endpoints by path, `METHOD path` or operationId; models and schemas by name."""
    if spec_type not in SPEC_KINDS:
        raise ValidationError(f"spec_type must be one of {', '.join(SPEC_KINDS)}")
    index = await _index(session, user_id, project_id)
    rows = (
        (
            await session.execute(
                select(DocChunk).where(
                    DocChunk.project_id == index.project_id, DocChunk.kind == SPEC_KINDS[spec_type]
                )
            )
        )
        .scalars()
        .all()
    )
    wanted = {i.strip().lower(): i.strip() for i in identifiers if i.strip()}  # as asked, for not_found
    found, missing = [], set(wanted)
    for c in rows:
        names = {
            c.key.lower(),
            c.title.lower(),
            str(c.data.get("path", "")).lower(),
            str(c.data.get("operation_id", "")).lower(),
        }
        hit = wanted.keys() & names
        if hit:
            found.append(_chunk_dict(c))
            missing -= hit
    return {"spec_type": spec_type, "specs": found, "not_found": sorted(wanted[m] for m in missing)}


async def search_context(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    keywords: list[str],
    *,
    scope: Literal["stories", "specs", "all"] = "all",
    limit: int = 5,
) -> dict[str, Any]:
    """Chunks ranked by how many keywords they match (title counts double)."""
    index = await _index(session, user_id, project_id)
    query = select(DocChunk).where(DocChunk.project_id == index.project_id)
    if scope == "stories":
        query = query.where(DocChunk.kind == "story")
    elif scope == "specs":
        query = query.where(DocChunk.kind != "story")
    wanted = {stem(w): w for k in keywords for w in tokenize(k)}
    matches: list[dict[str, Any]] = []
    for c in (await session.execute(query)).scalars():
        criteria = " ".join(map(str, c.data.get("acceptance_criteria", [])))
        body = {stem(w) for w in tokenize(f"{c.content} {criteria} {' '.join(map(str, c.keywords))}")}
        title = {stem(w) for w in tokenize(c.title)}
        matched = [w for s, w in wanted.items() if s in body or s in title]
        if matched:
            score = sum(2 if stem(w) in title else 1 for w in matched)
            matches.append(
                {
                    "id": c.key,
                    "type": "user_story" if c.kind == "story" else c.kind,
                    "title": c.title,
                    "relevance_score": score,
                    "matched_keywords": matched,
                }
            )
    matches.sort(key=lambda m: (-int(m["relevance_score"]), str(m["id"])))
    return {"matches": matches[: max(1, min(limit, 50))], "total_matches": len(matches)}


async def list_stories_by_epic(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, epic: str
) -> dict[str, Any]:
    """The stories of an epic (case-insensitive), in id order."""
    index = await _index(session, user_id, project_id)
    rows = (
        (
            await session.execute(
                select(DocChunk)
                .where(
                    DocChunk.project_id == index.project_id,
                    DocChunk.kind == "story",
                    func.lower(DocChunk.epic) == epic.strip().lower(),
                )
                .order_by(DocChunk.key)
            )
        )
        .scalars()
        .all()
    )
    if not rows:
        raise UnknownEpicError(epic, index.counts.get("epics", []))
    return {
        "epic": rows[0].epic,
        "stories": [
            {
                "id": r.key,
                "title": r.title,
                "priority": r.data.get("priority"),
                "acceptance_criteria_count": len(r.data.get("acceptance_criteria", [])),
                "agents": r.data.get("agents", []),
            }
            for r in rows
        ],
    }


async def get_context_summary(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str
) -> dict[str, Any]:
    """What the index holds."""
    index = await _index(session, user_id, project_id)
    c = index.counts
    return {
        "project_id": str(index.project_id),
        "total_stories": c["stories"],
        "epics": c["epics"],
        "api_endpoint_count": c["endpoints"],
        "db_model_count": c["models"],
        "schema_count": c["schemas"],
        "last_chunked": index.indexed_at.isoformat(),
        "index_version": c.get("index_version"),  # the chunker that built it (null: not recorded then)
        "root": Path(index.root).name,  # the folder name only, never a server path
    }
