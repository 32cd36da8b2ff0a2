"""Reading one entry in full, and the feedback loop that improves entries while people work.

`update_entry` can add `code_paths` (files found to implement the concept) and record a
terminology correction; every change is validated, written with the user's write permission, and
recorded with provenance (user, session, time) in `kb_entry_revisions`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from orrery.db.base import utcnow
from orrery.db.models import KbCollection, KbEntry, KbEntryRevision, KbRelation
from orrery.errors import NotFoundError, ValidationError
from orrery.repo.scope import require_project

MAX_CODE_PATHS = 50
_PATH = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./@+-]*$")


@dataclass(frozen=True)
class RelatedEntry:
    """An entry linked to the one being read."""

    code: str
    name: str
    relation: str
    direction: str


@dataclass(frozen=True)
class FullEntry:
    """An entry with its collection, data and relations."""

    entry_id: uuid.UUID
    code: str
    name: str
    description: str | None
    collection_slug: str
    collection_name: str
    data: dict[str, Any]
    related: list[RelatedEntry] = field(default_factory=list)


async def _entry(session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, code: str) -> Any:
    project = await require_project(session, user_id, project_id)
    row = (
        await session.execute(
            select(KbEntry, KbCollection)
            .join(KbCollection, KbCollection.id == KbEntry.collection_id)
            .where(KbEntry.project_id == project.id, KbEntry.code == code.strip().upper())
        )
    ).first()
    if row is None:
        raise NotFoundError("entry", code)
    return row


async def get_entry(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, code: str
) -> FullEntry:
    """An entry by code with every relation in both directions (two queries)."""
    entry, collection = await _entry(session, user_id, project_id, code)
    other = aliased(KbEntry)
    rows = await session.execute(
        select(KbRelation.src_entry_id, KbRelation.rel_type, other.code, other.name)
        .join(
            other,
            or_(
                (KbRelation.src_entry_id == entry.id) & (other.id == KbRelation.dst_entry_id),
                (KbRelation.dst_entry_id == entry.id) & (other.id == KbRelation.src_entry_id),
            ),
        )
        .order_by(KbRelation.rel_type, other.code)
    )
    related = [
        RelatedEntry(c, n, rel, "outgoing" if src == entry.id else "incoming")
        for src, rel, c, n in rows.all()
    ]
    return FullEntry(
        entry.id,
        entry.code,
        entry.name,
        entry.description,
        collection.slug,
        collection.name,
        dict(entry.data or {}),
        related,
    )


def clean_paths(paths: list[str]) -> list[str]:
    cleaned = []
    for raw in paths:
        path = raw.strip()
        if not _PATH.match(path) or ".." in path.split("/") or len(path) > 300:
            raise ValidationError(f"code path {raw!r} must be a relative file path inside the repository")
        cleaned.append(path)
    return cleaned


MAX_CORRECTION = 1_000
"""Longest correction an entry records (after collapsing whitespace)."""


async def update_entry(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    code: str,
    *,
    add_code_paths: list[str] | None = None,
    correction: str | None = None,
    session_id: uuid.UUID | None = None,
) -> FullEntry:
    """Add code paths and/or record a terminology correction, with provenance; returns the entry."""
    if not add_code_paths and not (correction and correction.strip()):
        raise ValidationError("nothing to update: give add_code_paths and/or a correction")
    entry, _ = await _entry(session, user_id, project_id, code)
    await require_project(session, user_id, entry.project_id, write=True)
    data = dict(entry.data or {})
    changes: dict[str, Any] = {}
    if add_code_paths:
        existing = [str(p) for p in data.get("code_paths", [])]
        new = [p for p in dict.fromkeys(clean_paths(add_code_paths)) if p not in existing]
        if len(existing) + len(new) > MAX_CODE_PATHS:
            raise ValidationError(f"an entry keeps at most {MAX_CODE_PATHS} code paths")
        data["code_paths"] = existing + new
        changes["added_code_paths"] = new
    if correction and correction.strip():
        note = " ".join(correction.split())
        if len(note) > MAX_CORRECTION:  # refused, never cut: a truncated correction can say the opposite
            raise ValidationError(
                f"a correction is at most {MAX_CORRECTION} characters ({len(note)} given): shorten it"
            )
        data["corrections"] = [*data.get("corrections", []), {"text": note, "at": utcnow().isoformat()}]
        changes["correction"] = note
    entry.data = data
    session.add(KbEntryRevision(entry_id=entry.id, user_id=user_id, session_id=session_id, changes=changes))
    await session.flush()
    return await get_entry(session, user_id, project_id, entry.code)


async def entry_revisions(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, code: str
) -> list[KbEntryRevision]:
    """The recorded changes of an entry, oldest first."""
    entry, _ = await _entry(session, user_id, project_id, code)
    rows = await session.execute(
        select(KbEntryRevision)
        .where(KbEntryRevision.entry_id == entry.id)
        .order_by(KbEntryRevision.created_at)
    )
    return list(rows.scalars())
