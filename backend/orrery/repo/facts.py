"""Remembered facts about a person, with their lineage (issue 40 §2).

Every query is scoped to the calling person: another person's fact id is simply not found. A newer
fact on the same `subject` (or naming the one it `supersedes`) marks the older one superseded: it is
kept as history and never shown to the model as current. Forgetting a fact forgets the older
versions it replaced too, so nothing forgotten comes back as history.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.models import ChatSession, Fact, Message
from orrery.errors import NotFoundError, ValidationError
from orrery.repo.scope import as_uuid

MAX_FACT_CHARS = 1000
MAX_SUBJECT_CHARS = 200
UNSET: object = object()
"""`update_fact`'s "leave this field as it is" (None clears subject and valid_from)."""


def clean_text(text: str) -> str:
    """A fact's text, trimmed; empty or over `MAX_FACT_CHARS` is refused."""
    value = " ".join(str(text).split())
    if not value:
        raise ValidationError("a fact needs some text")
    if len(value) > MAX_FACT_CHARS:
        raise ValidationError(f"a fact is at most {MAX_FACT_CHARS} characters (this one has {len(value)})")
    return value


def clean_subject(subject: str | None) -> str | None:
    """A subject compared as written, whatever its case and spacing: "Home city" == "home  city"."""
    if subject is None:
        return None
    value = " ".join(str(subject).lower().split())
    if len(value) > MAX_SUBJECT_CHARS:
        raise ValidationError(f"a subject is at most {MAX_SUBJECT_CHARS} characters")
    return value or None


def aware(when: datetime | None) -> datetime | None:
    """A date without a zone is taken as UTC (a plain `2026-03-01` from a form or the CLI)."""
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


async def get_fact(session: AsyncSession, user_id: uuid.UUID, fact_id: uuid.UUID | str) -> Fact:
    """One of the person's facts (current or history), or `NotFoundError`."""
    fid = as_uuid(fact_id, "fact")
    fact = (
        await session.execute(select(Fact).where(Fact.id == fid, Fact.user_id == user_id))
    ).scalar_one_or_none()
    if fact is None:
        raise NotFoundError("fact", fid)
    return fact


async def list_facts(
    session: AsyncSession,
    user_id: uuid.UUID,
    *,
    history: bool = False,
    source_session_id: uuid.UUID | str | None = None,
) -> Sequence[Fact]:
    """The person's current facts, oldest first; with `history` the superseded ones too; with
    `source_session_id` only those said in that chat (a malformed id is not found)."""
    query = select(Fact).where(Fact.user_id == user_id)
    if not history:
        query = query.where(Fact.superseded_at.is_(None))
    if source_session_id is not None:
        query = query.where(Fact.source_session_id == as_uuid(source_session_id, "session"))
    return (await session.execute(query.order_by(Fact.created_at, Fact.id))).scalars().all()


async def chat_source(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID
) -> tuple[uuid.UUID, int | None]:
    """Where a fact said in this chat comes from: the chat and its latest user message's seq, in
    one statement. A chat set to `remember: false` is refused (no fact is saved from it)."""
    latest = (
        select(Message.seq)
        .where(Message.session_id == ChatSession.id, Message.role == "user", Message.superseded_at.is_(None))
        .order_by(Message.seq.desc())
        .limit(1)
        .scalar_subquery()
    )
    row = (
        await session.execute(
            select(ChatSession.remember, latest).where(
                ChatSession.id == session_id, ChatSession.user_id == user_id
            )
        )
    ).first()
    if row is None:
        raise NotFoundError("session", session_id)
    if not row[0]:
        raise ValidationError(
            "this chat is set to 'don't remember' (remember: false), so no fact is saved from it; "
            "the person can turn remembering on for the chat, or add the fact on the facts page"
        )
    return session_id, row[1]


async def create_fact(
    session: AsyncSession,
    user_id: uuid.UUID,
    text: str,
    *,
    subject: str | None = None,
    valid_from: datetime | None = None,
    supersedes: uuid.UUID | str | None = None,
    source_session_id: uuid.UUID | None = None,
    source_seq: int | None = None,
    now: datetime | None = None,
) -> tuple[Fact, list[Fact]]:
    """Store a fact; it supersedes the fact named by `supersedes` (which must be the person's and
    current) and any current fact on the same subject. Returns the new fact and those it replaced."""
    at = now or utcnow()
    value, topic = clean_text(text), clean_subject(subject)
    replaced: list[Fact] = []
    if supersedes is not None:
        older = await get_fact(session, user_id, supersedes)
        if older.superseded_at is not None:
            raise ValidationError(
                f"fact {older.id} was already replaced by {older.superseded_by}; supersede that one instead"
            )
        replaced.append(older)
        topic = topic or older.subject
    if topic is not None:
        same = await session.execute(
            select(Fact).where(Fact.user_id == user_id, Fact.subject == topic, Fact.superseded_at.is_(None))
        )
        replaced.extend(f for f in same.scalars() if f not in replaced)
    fact = Fact(
        user_id=user_id,
        text=value,
        subject=topic,
        valid_from=aware(valid_from),
        source_session_id=source_session_id,
        source_seq=source_seq,
        created_at=at,
        updated_at=at,
    )
    session.add(fact)
    await session.flush()
    for older in replaced:
        older.superseded_by, older.superseded_at = fact.id, at
    await session.flush()
    return fact, replaced


async def update_fact(
    session: AsyncSession,
    user_id: uuid.UUID,
    fact_id: uuid.UUID | str,
    *,
    text: str | None = None,
    subject: str | None | object = UNSET,
    valid_from: datetime | None | object = UNSET,
) -> Fact:
    """Correct a fact in place (its text, subject or when it became true); lineage is unchanged."""
    fact = await get_fact(session, user_id, fact_id)
    if text is not None:
        fact.text = clean_text(text)
    if subject is not UNSET:
        fact.subject = clean_subject(subject if isinstance(subject, str) else None)
    if valid_from is not UNSET:
        fact.valid_from = aware(valid_from) if isinstance(valid_from, datetime) else None
    fact.updated_at = utcnow()
    await session.flush()
    return fact


async def delete_fact(session: AsyncSession, user_id: uuid.UUID, fact_id: uuid.UUID | str) -> list[uuid.UUID]:
    """Forget a fact and the older versions it replaced (so none comes back as history); the ids
    forgotten, the named one first."""
    fact = await get_fact(session, user_id, fact_id)
    links = await session.execute(
        select(Fact.id, Fact.superseded_by).where(Fact.user_id == user_id, Fact.superseded_by.is_not(None))
    )
    replaced_by: dict[uuid.UUID, list[uuid.UUID]] = {}
    for older, newer in links.all():
        if newer is not None:
            replaced_by.setdefault(newer, []).append(older)
    gone, todo = [fact.id], [fact.id]
    while todo:
        for older in replaced_by.get(todo.pop(), []):
            if older not in gone:
                gone.append(older)
                todo.append(older)
    await session.execute(
        delete(Fact)
        .where(Fact.user_id == user_id, Fact.id.in_(gone))
        .execution_options(synchronize_session=False)
    )
    return gone


async def forget_session_facts(session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str) -> int:
    """Forget every fact said in one chat (the chat itself may be gone); how many."""
    sid = as_uuid(session_id, "session")
    result = await session.execute(
        delete(Fact)
        .where(Fact.user_id == user_id, Fact.source_session_id == sid)
        .execution_options(synchronize_session=False)
        .returning(Fact.id)
    )
    return len(result.all())
