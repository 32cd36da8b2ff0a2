"""Human names for receipt item keys (`goal:<uuid>`, `pattern:0`, `seq 12-13`, `task:<uuid>`): the
inspector shows what was in or out of the context, not identifiers. Every key of every receipt on the
page is resolved at once, in at most four queries (entities, projects, the learned summary, messages),
each scoped to the user; nothing grows with the number of items."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import Entity, Fact, Message, Project, UserSummary
from orrery.repo.scope import member_project_ids
from orrery.vocabulary import ENTITY_KINDS

_ID = re.compile(r"^([a-z_]+):([0-9a-fA-F-]{36})$")
_SEQ = re.compile(r"^seq (\d+)(?:-(\d+))?$")
_LEARNED = {
    "pattern": ("patterns", "Pattern"),
    "win": ("wins", "Past win"),
    "struggle": ("struggles", "Challenge"),
}
_FIXED = {
    "header": "section heading",
    "notice": "data notice",
    "none": "no active goals",
    "status": "engagement status",
    "timezone": "time zone",
    "bio": "about the user",
    "name": "name",
    "kb:packet": "knowledge packet",
    "relationships": "relationship guide",
    "hint": "how to ask for more",
}
EXCERPT = 90


def receipt_keys(receipts: Iterable[dict[str, Any]]) -> set[str]:
    """Every item key in these receipts (`ContextReceipt.as_dict()`)."""
    return {
        str(item.get("key", ""))
        for r in receipts
        for s in r.get("sections", [])
        for item in [*s.get("included", []), *s.get("excluded", [])]
    }


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """One line of a message, cut at a word."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + "…"


async def resolve_labels(
    session: AsyncSession, user_id: uuid.UUID, chat_id: uuid.UUID, keys: Iterable[str]
) -> dict[str, str]:
    """key -> a human label, for the keys that have one (others are shown as they are)."""
    keys = set(keys)
    labels = {k: v for k, v in _FIXED.items() if k in keys}
    labels.update({k: f"{k[6:].capitalize()} (group)" for k in keys if k.startswith("group:")})
    ids: dict[str, tuple[str, uuid.UUID]] = {}
    for key in keys:
        found = _ID.match(key)
        if found:
            ids[key] = (found.group(1), uuid.UUID(found.group(2)))
    labels.update(await _entity_labels(session, user_id, ids))
    labels.update(await _fact_labels(session, user_id, ids))
    labels.update(await _learned_labels(session, user_id, keys))
    labels.update(await _message_labels(session, chat_id, keys))
    return labels


async def _fact_labels(
    session: AsyncSession, user_id: uuid.UUID, ids: dict[str, tuple[str, uuid.UUID]]
) -> dict[str, str]:
    """`fact:<id>` -> "Fact: <its text>" (the person's own facts only)."""
    fact_ids = {i for kind, i in ids.values() if kind == "fact"}
    if not fact_ids:
        return {}
    rows = await session.execute(
        select(Fact.id, Fact.text).where(Fact.id.in_(fact_ids), Fact.user_id == user_id)
    )
    texts = {row.id: row.text for row in rows}
    return {
        key: f"Fact: {excerpt(texts[i])}" for key, (kind, i) in ids.items() if kind == "fact" and i in texts
    }


async def _entity_labels(
    session: AsyncSession, user_id: uuid.UUID, ids: dict[str, tuple[str, uuid.UUID]]
) -> dict[str, str]:
    entity_ids = {i for kind, i in ids.values() if kind in ENTITY_KINDS}
    project_ids = {i for kind, i in ids.values() if kind == "project"}
    names: dict[uuid.UUID, str] = {}
    if entity_ids:
        rows = await session.execute(
            select(Entity.id, Entity.name).where(
                Entity.id.in_(entity_ids), Entity.project_id.in_(member_project_ids(user_id))
            )
        )
        names.update({row.id: row.name for row in rows})
    if project_ids:
        rows = await session.execute(
            select(Project.id, Project.name).where(
                Project.id.in_(project_ids), Project.id.in_(member_project_ids(user_id))
            )
        )
        names.update({row.id: row.name for row in rows})
    return {key: f"{kind}: {names[i]}" for key, (kind, i) in ids.items() if i in names}


async def _learned_labels(session: AsyncSession, user_id: uuid.UUID, keys: set[str]) -> dict[str, str]:
    wanted = [(k, *k.split(":", 1)) for k in keys if k.split(":", 1)[0] in _LEARNED and ":" in k]
    if not wanted:
        return {}
    summary = await session.get(UserSummary, user_id)
    if summary is None:
        return {}
    out = {}
    for key, group, index in wanted:
        field, label = _LEARNED[group]
        values = getattr(summary, field) or []
        if index.isdigit() and int(index) < len(values):
            out[key] = f"{label}: {excerpt(str(values[int(index)]))}"
    return out


async def _message_labels(session: AsyncSession, chat_id: uuid.UUID, keys: set[str]) -> dict[str, str]:
    spans: dict[str, tuple[int, str]] = {}
    for key in keys:
        found = _SEQ.match(key)
        if found:
            first, last = found.group(1), found.group(2)
            spans[key] = (int(first), f"#{first}–{last}" if last else f"#{first}")
    if not spans:
        return {}
    rows = await session.execute(
        select(Message.seq, Message.role, Message.content, Message.created_at, Message.superseded_at).where(
            Message.session_id == chat_id, Message.seq.in_({seq for seq, _ in spans.values()})
        )
    )
    by_seq = {row.seq: row for row in rows}
    out = {}
    for key, (seq, number) in spans.items():
        row = by_seq.get(seq)
        if row is not None and row.superseded_at is not None:
            out[key] = f"{number} (replaced by an edit)"
        elif row is not None:
            when = row.created_at.strftime("%b %d %H:%M")
            out[key] = f"{number} {row.role}, {when}: “{excerpt(row.content)}”"
    return out
