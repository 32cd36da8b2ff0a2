"""The terminal chat's focus by name and its title: `/focus Launch marketing` (or `plan:Launch
marketing`, or `task:<uuid>` as before) finds the entity in the chat's project the way the web app's
focus picker does, and a chat started from the terminal takes its title from its first message
instead of staying "Untitled chat"."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.errors import ValidationError
from orrery.text import preview
from orrery.vocabulary import ENTITY_KINDS

TITLE_CHARS = 60
SHOWN = 5


async def resolve_focus(
    s: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID, text: str
) -> tuple[str, uuid.UUID]:
    """`KIND:ID`, `KIND:NAME` or `NAME` -> (kind, id). A name may be part of one: one match, or one
    whose whole name it is, wins; several are listed."""
    from orrery.repo import chat
    from orrery.repo.sessions import search_entities

    kind, sep, rest = text.partition(":")
    kind = kind.strip().lower()
    if not sep or kind not in (*ENTITY_KINDS, "project"):
        kind, rest = "", text
    rest = rest.strip()
    try:
        ident = uuid.UUID(rest)
    except ValueError:
        ident = None
    if ident is not None and kind:
        await chat.check_focus(s, user_id, project_id, kind, ident)
        return kind, ident
    found = await search_entities(s, user_id, project_id, query=rest, kind=kind or None, limit=50)
    exact = [e for e in found if e.name.casefold() == rest.casefold()]
    chosen = exact if len(exact) == 1 else found
    if len(chosen) == 1:
        return chosen[0].kind, chosen[0].id
    if not chosen:
        raise ValidationError(f"nothing in this project is named like “{rest}” (try part of its name)")
    names = "; ".join(f"{e.kind}:{e.name}" for e in chosen[:SHOWN])
    more = f" and {len(chosen) - SHOWN} more" if len(chosen) > SHOWN else ""
    raise ValidationError(
        f"“{rest}” names {len(chosen)}: {names}{more}. Say which, e.g. /focus {names.split(';')[0]}"
    )


async def title_from_first_message(
    s: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID, text: str
) -> None:
    """An untitled chat with no messages yet takes (the start of) its first message as its title."""
    from orrery.repo import chat
    from orrery.repo.sessions import rename_session

    record = await chat.get_session(s, user_id, session_id)
    if record.title or record.message_count:
        return
    await rename_session(s, user_id, record.id, preview(text, TITLE_CHARS))


async def focus_name(s: AsyncSession, record: Any) -> str:
    """The focused entity's name, for the line that confirms a `/focus`."""
    from orrery.db.models import Entity

    entity = await s.get(Entity, record.focus_id) if record.focus_id else None
    return entity.name if entity is not None else str(record.focus_id)
