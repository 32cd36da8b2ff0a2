"""Capture: create a knowledge entry from what was learned while working (the loop of seed 000).

The capture offer an empty or thin knowledge base makes ("I can capture it as knowledge") must lead
somewhere: `create_entry` writes a new entry into a collection by its slug (a standard collection
such as `business-rules` or `glossary` is created on first use, so an empty KB can grow), with an
optional code (else the collection's prefix and the next free number: `BR-013`), code paths and
links to existing entries, validated as `update_entry` validates them, and records its provenance
(person, chat, message seq) in `kb_entry_revisions`. Nothing is half-written: any refusal comes
before the first write, and the caller's transaction holds the rest.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import KbCollection, KbEntry, KbEntryRevision, KbRelation, Message
from orrery.errors import ValidationError
from orrery.knowledge.entries import MAX_CODE_PATHS, FullEntry, clean_paths, get_entry
from orrery.repo import knowledge
from orrery.repo.knowledge import CODE_PATTERN
from orrery.repo.scope import require_project
from orrery.vocabulary import KB_COLLECTION_PRIORITY

STANDARD = {
    "business-rules": ("Business Rules", "BR"),
    "glossary": ("Glossary", "GT"),
    "decisions": ("Decisions", "DR"),
    "features": ("Features", "FT"),
    "standards": ("Standards", "ST"),
    "principles": ("Principles", "PR"),
    "tensions": ("Tensions", "TN"),
    "strategy": ("Strategy", "SG"),
    "tracking-events": ("Tracking Events", "TE"),
}
"""The seed's collections: their titles and code prefixes (as the demo KB writes them)."""
assert set(STANDARD) == set(KB_COLLECTION_PRIORITY)
MAX_NAME = 200
MAX_DESCRIPTION = 4_000
MAX_LINKS = 20
LINK_RELATION = "relates_to"


def _prefix(slug: str) -> str:
    """The code prefix of a collection: the standard one, else the initials of its slug."""
    if slug in STANDARD:
        return STANDARD[slug][1]
    return "".join(part[0] for part in slug.split("-") if part).upper()[:6] or "KB"


def _text(name: str, description: str | None) -> tuple[str, str | None]:
    clean = " ".join(name.split())
    if not clean:
        raise ValidationError("an entry needs a name")
    if len(clean) > MAX_NAME:
        raise ValidationError(f"a name is at most {MAX_NAME} characters ({len(clean)} given): shorten it")
    body = (description or "").strip() or None
    if body and len(body) > MAX_DESCRIPTION:
        raise ValidationError(
            f"a description is at most {MAX_DESCRIPTION} characters ({len(body)} given): shorten it"
        )
    return clean, body


async def _collection(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID, slug: str
) -> KbCollection:
    found = (
        await session.execute(
            select(KbCollection).where(KbCollection.project_id == project_id, KbCollection.slug == slug)
        )
    ).scalar_one_or_none()
    if found is not None:
        return found
    if slug not in STANDARD:
        known = ", ".join(STANDARD)
        raise ValidationError(f"no collection {slug!r} in this project; use an existing one or: {known}")
    title = STANDARD[slug][0]
    return await knowledge.create_collection(session, user_id, project_id, slug, title)


async def _next_code(session: AsyncSession, project_id: uuid.UUID, prefix: str) -> str:
    codes = await session.execute(
        select(KbEntry.code).where(KbEntry.project_id == project_id, KbEntry.code.like(f"{prefix}-%"))
    )
    numbers = [int(m.group(1)) for (c,) in codes if (m := re.fullmatch(rf"{prefix}-(\d+)", c))]
    return f"{prefix}-{max(numbers, default=0) + 1:03d}"


async def _linked(session: AsyncSession, project_id: uuid.UUID, links: list[str]) -> dict[str, uuid.UUID]:
    wanted = list(dict.fromkeys(c.strip().upper() for c in links if c.strip()))
    if len(wanted) > MAX_LINKS:
        raise ValidationError(f"an entry links at most {MAX_LINKS} entries")
    if not wanted:
        return {}
    rows = await session.execute(
        select(KbEntry.code, KbEntry.id).where(KbEntry.project_id == project_id, KbEntry.code.in_(wanted))
    )
    found = {code: eid for code, eid in rows}
    missing = [c for c in wanted if c not in found]
    if missing:
        raise ValidationError(f"no entry {', '.join(missing)} to link to in this project")
    return found


async def create_entry(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    *,
    collection: str,
    name: str,
    description: str | None = None,
    code: str | None = None,
    code_paths: list[str] | None = None,
    links: list[str] | None = None,
    session_id: uuid.UUID | None = None,
    seq: int | None = None,
) -> FullEntry:
    """Create an entry (see the module docstring); returns it in full, with its links."""
    project = await require_project(session, user_id, project_id, write=True)
    clean_name, body = _text(name, description)
    paths = list(dict.fromkeys(clean_paths(code_paths or [])))
    if len(paths) > MAX_CODE_PATHS:
        raise ValidationError(f"an entry keeps at most {MAX_CODE_PATHS} code paths")
    wanted = code.strip().upper() if code and code.strip() else None
    if wanted is not None and not CODE_PATTERN.fullmatch(wanted):
        raise ValidationError(f"entry code {code!r} must look like 'BR-012' (letters, '-', digits)")
    linked = await _linked(session, project.id, links or [])
    home = await _collection(session, user_id, project.id, collection.strip().lower())
    final = wanted or await _next_code(session, project.id, _prefix(home.slug))
    data: dict[str, Any] = {"code_paths": paths} if paths else {}
    entry = await knowledge.create_entry(session, user_id, home.id, final, clean_name, body, data)
    session.add_all(  # the links were checked above: same project, written with the entry
        KbRelation(project_id=project.id, src_entry_id=entry.id, rel_type=LINK_RELATION, dst_entry_id=target)
        for target in linked.values()
    )
    created = {"created": {"collection": home.slug, "code": final, "name": clean_name}, "source_seq": seq}
    session.add(KbEntryRevision(entry_id=entry.id, user_id=user_id, session_id=session_id, changes=created))
    await session.flush()
    return await get_entry(session, user_id, project.id, final)


async def latest_user_seq(session: AsyncSession, session_id: uuid.UUID | None) -> int | None:
    """The seq of the chat's latest user message: what a tool call of this turn answers."""
    if session_id is None:
        return None
    found = await session.execute(
        select(func.max(Message.seq)).where(Message.session_id == session_id, Message.role == "user")
    )
    return found.scalar_one_or_none()
