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

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.models import ChatSession, Fact, Message, ProjectMember
from orrery.errors import NotFoundError, ValidationError
from orrery.repo.lineage import Said, forget_quotes
from orrery.repo.scope import as_uuid, member_project_ids

MAX_FACT_CHARS = 1000
MAX_SUBJECT_CHARS = 200
FACT_KINDS = ("fact", "instruction", "preference")
STANDING_KINDS = ("instruction", "preference")
"""What holds in later chats as the person's own standing instructions (the prompt's own part)."""
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


def clean_kind(kind: str | None) -> str:
    """A known kind (default `fact`), or a `ValidationError` naming the known ones."""
    value = (kind or "fact").strip().lower()
    if value not in FACT_KINDS:
        raise ValidationError(f"unknown kind {kind!r}; expected one of {', '.join(FACT_KINDS)}")
    return value


async def checked_project(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str | None
) -> uuid.UUID | None:
    """A project the person is a member of (None: every project); another's is not found."""
    if project_id is None:
        return None
    pid = as_uuid(project_id, "project")
    member = member_project_ids(user_id).where(ProjectMember.project_id == pid)
    if (await session.execute(member)).first() is None:
        raise NotFoundError("project", pid)
    return pid


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
    kind: str | None = None,
) -> Sequence[Fact]:
    """The person's current facts, oldest first; with `history` the superseded ones too; with
    `source_session_id` only those said in that chat (a malformed id is not found); with `kind`
    only that kind."""
    query = select(Fact).where(Fact.user_id == user_id)
    if kind is not None:
        query = query.where(Fact.kind == clean_kind(kind))
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
    kind: str | None = None,
    project_id: uuid.UUID | None = None,
) -> tuple[Fact, list[Fact]]:
    """Store a fact; it supersedes the fact named by `supersedes` (which must be the person's and
    current) and any current one of its family (plain facts, or standing instructions and
    preferences) on the same subject and in its project (a global one: in any project). Returns the
    new fact and those it replaced. `project_id` is trusted: callers check it (`checked_project`)."""
    at = now or utcnow()
    value, topic, sort = clean_text(text), clean_subject(subject), clean_kind(kind)
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
        same = select(Fact).where(
            Fact.user_id == user_id,
            Fact.subject == topic,
            Fact.superseded_at.is_(None),
            Fact.kind.in_(STANDING_KINDS) if sort in STANDING_KINDS else Fact.kind == "fact",
        )
        if project_id is not None:
            same = same.where(Fact.project_id == project_id)
        replaced.extend(f for f in (await session.execute(same)).scalars() if f not in replaced)
    fact = Fact(
        user_id=user_id,
        text=value,
        kind=sort,
        project_id=project_id if sort in STANDING_KINDS else None,
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
    kind: str | None = None,
    project_id: uuid.UUID | str | None | object = UNSET,
) -> Fact:
    """Correct a fact in place (its text, subject, kind, project or when it became true); lineage is
    unchanged. A plain fact holds in every project (its project is cleared)."""
    fact = await get_fact(session, user_id, fact_id)
    if text is not None:
        fact.text = clean_text(text)
    if kind is not None:
        fact.kind = clean_kind(kind)
    if project_id is not UNSET:
        given = project_id if isinstance(project_id, uuid.UUID | str) else None
        fact.project_id = await checked_project(session, user_id, given)
    if fact.kind == "fact":
        fact.project_id = None
    if subject is not UNSET:
        fact.subject = clean_subject(subject if isinstance(subject, str) else None)
    if valid_from is not UNSET:
        fact.valid_from = aware(valid_from) if isinstance(valid_from, datetime) else None
    fact.updated_at = utcnow()
    await session.flush()
    return fact


async def delete_fact(session: AsyncSession, user_id: uuid.UUID, fact_id: uuid.UUID | str) -> list[uuid.UUID]:
    """Forget a fact and the older versions it replaced (so none comes back as history), and the
    turns that said or quoted any of them across chats (`orrery.repo.lineage`); the ids forgotten,
    the named one first."""
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
    await forget_ids(session, user_id, gone)
    return gone


async def forget_ids(session: AsyncSession, user_id: uuid.UUID, ids: Sequence[uuid.UUID]) -> int:
    """Delete these facts of the person's and follow their lineage: every turn that said or quoted
    one is forgotten across chats, with what was derived from it; how many facts."""
    if not ids:
        return 0
    result = await session.execute(
        delete(Fact)
        .where(Fact.user_id == user_id, Fact.id.in_(list(ids)))
        .execution_options(synchronize_session=False)
        .returning(Fact.id, Fact.text, Fact.source_session_id, Fact.source_seq)
    )
    said = [Said(*row) for row in result.all()]
    await forget_quotes(session, user_id, said)
    return len(said)


async def same_current_text(session: AsyncSession, user_id: uuid.UUID, text: str) -> Fact | None:
    """The person's current fact with exactly this text (spacing and case aside), if any: what
    keeps one statement from being stored twice."""
    value = " ".join(text.split())
    rows = await session.execute(
        select(Fact).where(
            Fact.user_id == user_id, Fact.superseded_at.is_(None), func.lower(Fact.text) == value.lower()
        )
    )
    return rows.scalars().first()


async def forget_session_facts(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str, *, from_seq: int = 0
) -> int:
    """Forget every fact said in one chat (the chat itself may be gone), or in its messages from
    `from_seq` on (an edit took them back), with their lineage (`forget_ids`); how many."""
    sid = as_uuid(session_id, "session")
    said = select(Fact.id).where(Fact.user_id == user_id, Fact.source_session_id == sid)
    if from_seq:
        said = said.where(Fact.source_seq >= from_seq)
    return await forget_ids(session, user_id, list((await session.execute(said)).scalars()))
