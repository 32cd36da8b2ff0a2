"""Knowledge-base collections, entries and relations inside a project."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import KbCollection, KbEntry, KbRelation
from orrery.errors import ConflictError, NotFoundError, ValidationError
from orrery.repo.scope import as_uuid, member_project_ids, require_project
from orrery.vocabulary import KB_COLLECTION_PRIORITY

CODE_PATTERN = re.compile(r"^[A-Z]{1,6}-[0-9]{1,6}$")
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


async def create_collection(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    slug: str,
    name: str,
    *,
    priority: int | None = None,
    description: str | None = None,
) -> KbCollection:
    """Create a collection; the priority defaults to the standard ranking for known slugs."""
    if not SLUG_PATTERN.match(slug):
        raise ValidationError(f"collection slug {slug!r} must be lowercase words joined by '-'")
    project = await require_project(session, user_id, project_id, write=True)
    rank = priority if priority is not None else KB_COLLECTION_PRIORITY.get(slug, 100)
    if rank < 0:
        raise ValidationError("priority must not be negative")
    collection = KbCollection(
        project_id=project.id, slug=slug, name=name.strip() or slug, priority=rank, description=description
    )
    try:
        async with session.begin_nested():
            session.add(collection)
    except IntegrityError:
        raise ConflictError(f"collection {slug!r} already exists in this project") from None
    return collection


async def get_collection(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, slug: str
) -> KbCollection:
    """A collection by slug, or `NotFoundError`."""
    project = await require_project(session, user_id, project_id)
    found = (
        await session.execute(
            select(KbCollection).where(KbCollection.project_id == project.id, KbCollection.slug == slug)
        )
    ).scalar_one_or_none()
    if found is None:
        raise NotFoundError("collection", slug)
    return found


async def create_entry(
    session: AsyncSession,
    user_id: uuid.UUID,
    collection_id: uuid.UUID,
    code: str,
    name: str,
    description: str | None = None,
    data: dict[str, Any] | None = None,
) -> KbEntry:
    """Create an entry with a unique code such as `BR-012` in the collection's project."""
    if not CODE_PATTERN.fullmatch(code):
        raise ValidationError(f"entry code {code!r} must look like 'BR-012' (letters, '-', digits)")
    if not name.strip():
        raise ValidationError("entry name must not be empty")
    payload = dict(data or {})
    paths = payload.get("code_paths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ValidationError("data.code_paths must be a list of strings")
    collection = (
        await session.execute(
            select(KbCollection).where(
                KbCollection.id == collection_id, KbCollection.project_id.in_(member_project_ids(user_id))
            )
        )
    ).scalar_one_or_none()
    if collection is None:
        raise NotFoundError("collection", collection_id)
    await require_project(session, user_id, collection.project_id, write=True)
    entry = KbEntry(
        project_id=collection.project_id,
        collection_id=collection.id,
        code=code,
        name=name.strip(),
        description=description,
        data=payload,
    )
    try:
        async with session.begin_nested():
            session.add(entry)
    except IntegrityError:
        raise ConflictError(f"entry code {code!r} already exists in this project") from None
    return entry


async def get_entry_by_code(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, code: str
) -> KbEntry:
    """An entry by its code, or `NotFoundError`."""
    project = await require_project(session, user_id, project_id)
    entry = (
        await session.execute(select(KbEntry).where(KbEntry.project_id == project.id, KbEntry.code == code))
    ).scalar_one_or_none()
    if entry is None:
        raise NotFoundError("entry", code)
    return entry


async def relate_entries(
    session: AsyncSession, user_id: uuid.UUID, src_id: uuid.UUID | str, rel_type: str, dst_id: uuid.UUID | str
) -> KbRelation:
    """Link two entries of one project with a typed relation."""
    if not re.match(r"^[a-z][a-z_]{1,63}$", rel_type):
        raise ValidationError(f"relation type {rel_type!r} must be snake_case")
    ids = [as_uuid(src_id, "entry"), as_uuid(dst_id, "entry")]
    if ids[0] == ids[1]:
        raise ValidationError("an entry cannot relate to itself")
    rows = (
        await session.execute(
            select(KbEntry).where(KbEntry.id.in_(ids), KbEntry.project_id.in_(member_project_ids(user_id)))
        )
    ).scalars()
    found = {e.id: e for e in rows}
    for ident in ids:
        if ident not in found:
            raise NotFoundError("entry", ident)
    src, dst = found[ids[0]], found[ids[1]]
    if src.project_id != dst.project_id:
        raise ValidationError("related entries must belong to the same project")
    await require_project(session, user_id, src.project_id, write=True)
    relation = KbRelation(
        project_id=src.project_id, src_entry_id=src.id, rel_type=rel_type, dst_entry_id=dst.id
    )
    try:
        async with session.begin_nested():
            session.add(relation)
    except IntegrityError:
        raise ConflictError(f"{src.code} --{rel_type}--> {dst.code} already exists") from None
    return relation


async def list_collections(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str
) -> Sequence[KbCollection]:
    """A project's collections, highest priority (lowest number) first."""
    project = await require_project(session, user_id, project_id)
    result = await session.execute(
        select(KbCollection)
        .where(KbCollection.project_id == project.id)
        .order_by(KbCollection.priority, KbCollection.slug)
    )
    return result.scalars().all()


async def delete_entry(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, code: str
) -> None:
    """Delete an entry (its relations and revisions go with it); needs the write role."""
    entry = await get_entry_by_code(session, user_id, project_id, code)
    await require_project(session, user_id, entry.project_id, write=True)
    await session.delete(entry)
    await session.flush()
