"""Store what a person's message states as a standing instruction or preference, with the message.

Called by `append_message` in the message's own transaction, so the message and its fact commit
together or not at all. Only the person's own messages, never in a chat set to `remember: false`.
A statement already current is not stored again; a newer one on the same subject (or restating most
of an older one's words) supersedes the older one, in the same project.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import func, inspect, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import ChatSession, Fact
from orrery.memory.standing import Standing
from orrery.repo import facts as repo
from orrery.text import stems_of

RESTATES = 0.85
"""Share of the two statements' word stems they have in common (of all their stems) for a newer one
to replace an older one as its rewording. A change of value on a known topic ("keep answers short",
then "give me detailed answers") goes by the subject instead; a template said about another thing
("... when I ask about triangles", "... about API errors") stays two instructions."""
ECHOES = 0.6
"""Share of a model's `remember_fact` text found in what the capture stored from the same message
for it to be the same statement (the model words it in the third person)."""


async def _chat(session: AsyncSession, user_id: uuid.UUID, sid: uuid.UUID) -> tuple[bool, uuid.UUID | None]:
    """The chat's `remember` and project: from the row this transaction already holds, else one read."""
    key = inspect(ChatSession).identity_key_from_primary_key((sid,))
    held = session.sync_session.identity_map.get(key)
    if isinstance(held, ChatSession) and held.user_id == user_id:
        return held.remember, held.project_id
    row = (
        await session.execute(
            select(ChatSession.remember, ChatSession.project_id).where(
                ChatSession.id == sid, ChatSession.user_id == user_id
            )
        )
    ).first()
    return (bool(row[0]), row[1]) if row else (False, None)


def restated(new: str, older: str) -> bool:
    """Whether `new` restates `older`: nearly the same words, or every word of it and more ("I
    really prefer check-ins in the morning" restates "I prefer morning check-ins")."""
    mine, theirs = stems_of(new), stems_of(older)
    if not mine or not theirs:
        return False
    return theirs <= mine or len(mine & theirs) / len(mine | theirs) >= RESTATES


def echoes(text: str, captured: str) -> bool:
    """Whether most of `text`'s words are in `captured`."""
    mine = stems_of(text)
    return bool(mine) and len(mine & stems_of(captured)) / len(mine) >= ECHOES


async def store_standing(
    session: AsyncSession,
    user_id: uuid.UUID,
    sid: uuid.UUID,
    seq: int,
    at: datetime,
    found: Standing,
) -> Fact | None:
    """The fact stored for `found`, said at message `seq` of chat `sid`; None when the chat is not
    remembered or the same statement is current already."""
    remember, project = await _chat(session, user_id, sid)
    if not remember:
        return None
    scope = None if found.everywhere else project
    value = " ".join(found.text.split()).lower()
    current = await session.execute(  # one read: the same statement, and what it may restate
        select(Fact).where(
            Fact.user_id == user_id,
            Fact.superseded_at.is_(None),
            (
                Fact.kind.in_(repo.STANDING_KINDS)
                & (Fact.project_id == scope if scope else Fact.project_id.is_(None))
            )
            | (func.lower(Fact.text) == value),
        )
    )
    rows = list(current.scalars())
    if any(f.text.lower() == value for f in rows):
        return None
    older = next(
        (f for f in rows if f.kind != "fact" and f.project_id == scope and restated(found.text, f.text)),
        None,
    )
    fact, _ = await repo.create_fact(
        session,
        user_id,
        found.text,
        subject=older.subject if older is not None and older.subject else found.subject,
        supersedes=older.id if older is not None else None,
        source_session_id=sid,
        source_seq=seq,
        now=at,
        kind=found.kind,
        project_id=scope,
    )
    return fact


async def already_said(
    session: AsyncSession, user_id: uuid.UUID, text: str, sid: uuid.UUID | None, seq: int | None
) -> Fact | None:
    """The current fact that `text` would repeat: one with the same text, or the standing
    instruction captured from the same message (`sid`, `seq`) that it restates (a model asked to
    remember what the capture already stored)."""
    same = await repo.same_current_text(session, user_id, text)
    if same is not None or sid is None or seq is None:
        return same
    captured = await session.execute(
        select(Fact).where(
            Fact.user_id == user_id,
            Fact.source_session_id == sid,
            Fact.source_seq == seq,
            Fact.superseded_at.is_(None),
            Fact.kind.in_(repo.STANDING_KINDS),
        )
    )
    return next((f for f in captured.scalars() if echoes(text, f.text)), None)


async def adopt(
    session: AsyncSession, user_id: uuid.UUID, fact: Fact, subject: str | None, supersedes: str | None
) -> list[Fact]:
    """What a model's `remember_fact` adds to the statement the capture already stored: its subject
    (the capture's own is only its words) and what it replaces (the named fact, and the current
    ones on that subject). The facts it replaced."""
    topic = repo.clean_subject(subject)
    replaced: list[Fact] = []
    if supersedes is not None:
        older = await repo.get_fact(session, user_id, supersedes)
        if older.id != fact.id and older.superseded_at is None:
            replaced.append(older)
    if topic is not None:
        fact.subject = topic
        same = await session.execute(
            select(Fact).where(
                Fact.user_id == user_id,
                Fact.subject == topic,
                Fact.superseded_at.is_(None),
                Fact.id != fact.id,
            )
        )
        replaced.extend(f for f in same.scalars() if f not in replaced)
    for older in replaced:
        older.superseded_by, older.superseded_at = fact.id, fact.created_at
    await session.flush()
    return replaced
