"""Browsing and housekeeping of a user's chat sessions: the list (with each focus resolved in the
same query), rename, remember or not, delete, automatic agent routing, pages of history,
transitions, and the last turn's receipt. Every query is scoped to the calling user; anything else
is not found."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from orrery.db.base import utcnow
from orrery.db.models import AgentTransition, ChatDigest, ChatSession, Entity, Message, Project, TurnReceipt
from orrery.errors import ValidationError
from orrery.ops.jobs import enqueue_once
from orrery.repo import lineage
from orrery.repo.chat import get_session
from orrery.repo.facts import forget_session_facts
from orrery.repo.scope import as_uuid, member_project_ids, require_project
from orrery.vocabulary import ENTITY_KINDS

MAX_TITLE = 300
DIGEST_JOB = lineage.DIGEST_JOB
"""The job that builds a chat's digest (`memory.digests`), keyed `digest:<chat id>`."""
DIGEST_ATTEMPTS = 5
MAX_PAGE = 200


@dataclass(frozen=True)
class FocusInfo:
    """What a session is focused on, resolved for display."""

    kind: str
    id: uuid.UUID
    name: str | None
    state: str | None = None
    due_at: datetime | None = None


@dataclass(frozen=True)
class SessionListItem:
    """One row of the sessions list."""

    session: ChatSession
    focus: FocusInfo | None
    project_name: str | None


def _page(limit: int, offset: int) -> tuple[int, int]:
    """A page of at most MAX_PAGE rows, plus the one more a caller reads to know whether more follow."""
    if limit < 1 or limit > MAX_PAGE + 1:
        raise ValidationError(f"limit must be between 1 and {MAX_PAGE}")
    if offset < 0:
        raise ValidationError("offset must not be negative")
    return limit, offset


async def list_sessions(
    session: AsyncSession,
    user_id: uuid.UUID,
    *,
    project_id: uuid.UUID | str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[SessionListItem]:
    """The user's sessions, most recently active first, each with its focus and project (one query)."""
    limit, offset = _page(limit, offset)
    focus_project = aliased(Project)
    mine = member_project_ids(user_id)  # a project the user has left shows no names from it
    query = (
        select(ChatSession, Entity, focus_project.name, Project.name)
        .select_from(ChatSession)
        .outerjoin(
            Entity,
            (Entity.id == ChatSession.focus_id)
            & (Entity.project_id == ChatSession.project_id)
            & Entity.project_id.in_(mine),
        )
        .outerjoin(
            focus_project,
            (ChatSession.focus_kind == "project")
            & (focus_project.id == ChatSession.focus_id)
            & focus_project.id.in_(mine),
        )
        .outerjoin(Project, (Project.id == ChatSession.project_id) & Project.id.in_(mine))
        .where(ChatSession.user_id == user_id)
        .order_by(ChatSession.updated_at.desc(), ChatSession.id.desc())
        .limit(limit)
        .offset(offset)
    )
    if project_id is not None:
        query = query.where(ChatSession.project_id == as_uuid(project_id, "project"))
    items = []
    for chat, entity, focus_project_name, project_name in (await session.execute(query)).all():
        items.append(SessionListItem(chat, _focus(chat, entity, focus_project_name), project_name))
    return items


def _focus(chat: ChatSession, entity: Entity | None, project_name: str | None) -> FocusInfo | None:
    if chat.focus_kind is None or chat.focus_id is None:
        return None
    if chat.focus_kind == "project":
        return FocusInfo("project", chat.focus_id, project_name)
    if entity is None:  # the entity was deleted after the session focused it
        return FocusInfo(chat.focus_kind, chat.focus_id, None)
    return FocusInfo(entity.kind, entity.id, entity.name, entity.state, entity.due_at)


async def session_focus(session: AsyncSession, user_id: uuid.UUID, chat: ChatSession) -> FocusInfo | None:
    """The focus of one session, resolved (one query at most)."""
    if chat.focus_kind is None or chat.focus_id is None:
        return None
    if chat.focus_kind == "project":
        name = (
            await session.execute(
                select(Project.name).where(
                    Project.id == chat.focus_id, Project.id.in_(member_project_ids(user_id))
                )
            )
        ).scalar_one_or_none()
        return FocusInfo("project", chat.focus_id, name)
    entity = (
        await session.execute(
            select(Entity).where(
                Entity.id == chat.focus_id, Entity.project_id.in_(member_project_ids(user_id))
            )
        )
    ).scalar_one_or_none()
    return _focus(chat, entity, None)


async def rename_session(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str, title: str | None
) -> ChatSession:
    """Set or clear (empty or None) a session's title."""
    chat = await get_session(session, user_id, session_id)
    clean = " ".join((title or "").split())
    if len(clean) > MAX_TITLE:
        raise ValidationError(f"title is longer than {MAX_TITLE} characters")
    chat.title = clean or None
    await session.flush()
    return chat


async def set_remember(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str, remember: bool
) -> ChatSession:
    """Remember the chat (the default) or not: a chat not remembered is never recalled in another
    chat, no fact is saved from it and the pattern analyst skips it. It is read fresh from the row by
    every process, so the change holds on every worker from its next turn. Switched off, what was
    already learned from it goes with the change: its digest, the facts said in it (with their
    lineage: `orrery.repo.lineage`), the person's stored receipts, and the learned summary when it
    drew on it (rebuilt). Remembered again, its digest is queued (built once the chat is quiet)."""
    chat = await get_session(session, user_id, session_id)
    was, chat.remember = chat.remember, bool(remember)
    if not remember:
        await session.execute(delete(ChatDigest).where(ChatDigest.chat_id == chat.id))
        await forget_session_facts(session, user_id, chat.id)
        await lineage.clear_derived(session, user_id, [chat.id])
    elif not was:
        payload = {"chat_id": str(chat.id), "user_id": str(user_id)}
        key = f"digest:{chat.id}"
        await enqueue_once(session, DIGEST_JOB, payload, key=key, max_attempts=DIGEST_ATTEMPTS)
    await session.flush()
    return chat


async def delete_session(session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str) -> None:
    """Delete a session with its messages, transitions, summary, digest and receipt (database
    cascades), and the person's other stored receipts (a prompt that recalled it)."""
    chat = await get_session(session, user_id, session_id)
    await session.execute(delete(ChatSession).where(ChatSession.id == chat.id))
    await lineage.forget_receipts(session, user_id)


async def use_automatic_agent(session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str) -> None:
    """Let the router choose the agent again on the next message."""
    chat = await get_session(session, user_id, session_id)
    chat.active_agent = None
    await session.flush()


async def messages_page(
    session: AsyncSession,
    user_id: uuid.UUID,
    session_id: uuid.UUID | str,
    *,
    before_seq: int | None = None,
    limit: int = 30,
) -> tuple[list[Message], bool]:
    """The newest `limit` messages before `before_seq` in order, and whether earlier ones exist
    (superseded ones, replaced by an edit, are not shown)."""
    limit, _ = _page(limit, 0)
    chat = await get_session(session, user_id, session_id)
    query = select(Message).where(Message.session_id == chat.id, Message.superseded_at.is_(None))
    if before_seq is not None:
        query = query.where(Message.seq < before_seq)
    rows = list((await session.execute(query.order_by(Message.seq.desc()).limit(limit + 1))).scalars())
    return list(reversed(rows[:limit])), len(rows) > limit


async def transitions_between(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str, since: datetime | None
) -> Sequence[AgentTransition]:
    """A session's agent switches from `since` on (all when None), in order."""
    chat = await get_session(session, user_id, session_id)
    query = select(AgentTransition).where(AgentTransition.session_id == chat.id)
    if since is not None:
        query = query.where(AgentTransition.created_at >= since)
    return (
        (await session.execute(query.order_by(AgentTransition.created_at, AgentTransition.id)))
        .scalars()
        .all()
    )


async def search_entities(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    *,
    query: str = "",
    kind: str | None = None,
    limit: int = 20,
) -> Sequence[Entity]:
    """Entities of a project whose name contains `query` (any case), optionally of one kind."""
    project = await require_project(session, user_id, project_id)
    limit, _ = _page(limit, 0)
    stmt = select(Entity).where(Entity.project_id == project.id, Entity.is_scratch.is_not(True))
    if kind:
        if kind not in ENTITY_KINDS:
            raise ValidationError(f"unknown entity kind {kind!r}; expected one of {', '.join(ENTITY_KINDS)}")
        stmt = stmt.where(Entity.kind == kind)
    text = query.strip()[:200]
    if text:
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        stmt = stmt.where(Entity.name.ilike(f"%{escaped}%", escape="\\"))
    stmt = stmt.order_by(Entity.kind, Entity.name, Entity.id).limit(limit)
    return (await session.execute(stmt)).scalars().all()


async def save_turn_receipt(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str, receipt: dict[str, Any]
) -> None:
    """Keep the receipt of the session's latest turn (replacing the previous one)."""
    chat = await get_session(session, user_id, session_id)
    replaced = await session.execute(
        update(TurnReceipt)
        .where(TurnReceipt.session_id == chat.id)
        .values(receipt=receipt, created_at=utcnow())
    )
    if getattr(replaced, "rowcount", 0):
        return
    try:
        async with session.begin_nested():  # another worker may insert the first receipt at the same time
            session.add(TurnReceipt(session_id=chat.id, receipt=receipt))
    except IntegrityError:
        await session.execute(
            update(TurnReceipt)
            .where(TurnReceipt.session_id == chat.id)
            .values(receipt=receipt, created_at=utcnow())
        )


async def last_turn_receipt(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str
) -> TurnReceipt | None:
    """The latest turn's receipt, if a turn ran through the web app."""
    chat = await get_session(session, user_id, session_id)
    return await session.get(TurnReceipt, chat.id)
