"""Chat sessions, their ordered messages and agent transitions.

Message numbers come from an atomic `UPDATE ... RETURNING` on the session row, so two writers can
never take the same `seq`. A message's embedding is computed as it is written by the local model; a
remote model's is queued as a background job instead (never in a turn's write path).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Uuid, and_, bindparam, delete, literal_column, select, true
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from orrery.db.direct import Direct, Loader, parts
from orrery.db.models import AgentTransition, ChatSession, Entity, Message, SessionSummary
from orrery.errors import NotFoundError, ValidationError
from orrery.repo.graph import get_entity
from orrery.repo.scope import as_uuid, member_project_ids, require_project
from orrery.vocabulary import FOCUS_KINDS


@dataclass(frozen=True)
class NewMessage:
    """A message to append; `seq` and timestamps are assigned by `append_message`."""

    role: str
    content: str
    agent_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = field(default=None)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    token_count: int | None = None
    latency_ms: int | None = None
    cost_usd: float | None = None
    model: str | None = None
    """The model that answered (assistant replies)."""
    client_key: str | None = None
    request_fingerprint: str | None = None
    status: str = "complete"
    created_at: datetime | None = None
    """When the message was written; now unless importing a conversation (e.g. an evaluation)."""
    id: uuid.UUID | None = None
    """The id a door announced before the message existed (the AI SDK's `start` `messageId`)."""


def check_agent(agent_id: str | None) -> None:
    """A known agent id (built-in or a registered plugin's), else a `ValidationError` listing them."""
    if agent_id is not None:
        from orrery.roster import get_agent

        get_agent(agent_id)  # built-in or plugin agent, else a ValidationError listing them


async def create_session(
    session: AsyncSession,
    user_id: uuid.UUID,
    *,
    project_id: uuid.UUID | str | None = None,
    focus_kind: str | None = None,
    focus_id: uuid.UUID | str | None = None,
    title: str | None = None,
    active_agent: str | None = None,
    session_id: uuid.UUID | None = None,
    remember: bool = True,
) -> ChatSession:
    """Open a chat, optionally in a project and focused on the project or one of its entities;
    a caller-chosen `session_id` makes creation idempotent (a second insert hits the primary key).
    `remember=False`: "don't remember this chat" (never recalled elsewhere, no facts, no patterns)."""
    check_agent(active_agent)
    if (focus_kind is None) != (focus_id is None):
        raise ValidationError("focus_kind and focus_id go together")
    project = await require_project(session, user_id, project_id) if project_id is not None else None
    if focus_kind is not None:
        if focus_kind not in FOCUS_KINDS:
            raise ValidationError(
                f"unknown focus kind {focus_kind!r}; expected one of {', '.join(FOCUS_KINDS)}"
            )
        if project is None:
            raise ValidationError("a focused chat needs a project_id")
        assert focus_id is not None
        await check_focus(session, user_id, project.id, focus_kind, focus_id)
    chat = ChatSession(
        **({"id": session_id} if session_id is not None else {}),
        user_id=user_id,
        project_id=project.id if project else None,
        focus_kind=focus_kind,
        focus_id=as_uuid(focus_id, "entity") if focus_id is not None else None,
        title=title,
        active_agent=active_agent,
        remember=remember,
    )
    session.add(chat)
    await session.flush()
    return chat


async def check_focus(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID, kind: str, focus_id: uuid.UUID | str
) -> None:
    """A focus must be the session's project or one of its entities of that kind (else not found)."""
    if kind == "project":
        _check_project_focus(project_id, focus_id)
        return
    entity = await get_entity(session, user_id, focus_id)
    if entity.project_id != project_id or entity.kind != kind:
        raise NotFoundError(kind, focus_id)


def _check_project_focus(project_id: uuid.UUID | None, focus_id: uuid.UUID | str) -> None:
    if as_uuid(focus_id, "project") != project_id:
        raise ValidationError("a project focus must name the session's project")


async def find_session(session: AsyncSession, user_id: uuid.UUID, sid: uuid.UUID) -> ChatSession | None:
    """One of the user's chat sessions, or None."""
    return (
        await session.execute(
            select(ChatSession).where(ChatSession.id == sid, ChatSession.user_id == user_id)
        )
    ).scalar_one_or_none()


@dataclass(frozen=True)
class SessionState:
    """A chat session as a turn finds it: the row, its latest message, its focused entity, and
    whether any of its user messages is marked `failed` (only then does the turn read their texts)."""

    chat: ChatSession
    latest: Message | None
    focus: Entity | None
    any_failed: bool


_CHAT, _MESSAGE, _FOCUS = Loader.of(ChatSession), Loader.of(Message), Loader.of(Entity)


def _session_state_query(lateral: bool) -> Direct:
    """The statement of `session_and_latest`, built once per process (its ids are bound per call):
    building it per turn cost more than running it.

    With `lateral` (PostgreSQL), the latest message and the focus are each read by a `LATERAL`
    subquery that stops at one row, so the message is found by its (session_id, seq) key whatever
    the planner knows of the tables. Joined plainly, a plan made without statistics (a new or small
    database, before autovacuum's first ANALYZE) read every message of the session by `session_id`
    and then filtered on `seq`: a turn's read grew with the conversation (119 rows at 60 turns).
    SQLite has no `LATERAL`; its planner looks the message up by the key in either form."""
    user_id, sid = bindparam("user_id", type_=Uuid()), bindparam("sid", type_=Uuid())
    other = aliased(Message)
    any_failed = (
        select(other.id)
        .where(
            other.session_id == ChatSession.id,
            other.role == "user",
            other.status == literal_column("'failed'"),  # a literal: the partial index's own condition
            other.superseded_at.is_(None),
        )
        .correlate(ChatSession)
        .exists()
    )
    latest = and_(Message.session_id == ChatSession.id, Message.seq == ChatSession.message_count)
    focused = and_(
        Entity.id == ChatSession.focus_id,
        Entity.project_id == ChatSession.project_id,
        Entity.kind == ChatSession.focus_kind,
        Entity.project_id.in_(member_project_ids(user_id)),
    )
    if not lateral:
        return Direct(
            select(*_CHAT.columns, *_MESSAGE.columns, *_FOCUS.columns, any_failed.label("any_failed"))
            .select_from(ChatSession)
            .outerjoin(Message, latest)
            .outerjoin(Entity, focused)
            .where(ChatSession.id == sid, ChatSession.user_id == user_id)
        )
    message = select(*_MESSAGE.columns).where(latest).limit(1).correlate(ChatSession).lateral("latest")
    focus = select(*_FOCUS.columns).where(focused).limit(1).correlate(ChatSession).lateral("focus")
    return Direct(
        select(
            *_CHAT.columns,
            *(message.c[c.name] for c in _MESSAGE.columns),
            *(focus.c[c.name] for c in _FOCUS.columns),
            any_failed.label("any_failed"),
        )
        .select_from(ChatSession)
        .outerjoin(message, true())
        .outerjoin(focus, true())
        .where(ChatSession.id == sid, ChatSession.user_id == user_id)
    )


_SESSION_STATE = {
    "sqlite": _session_state_query(lateral=False),
    "postgresql": _session_state_query(lateral=True),
}


async def session_and_latest(session: AsyncSession, user_id: uuid.UUID, sid: uuid.UUID) -> SessionState:
    """One of the user's chat sessions with its latest message (`seq == message_count`, which
    appending and truncating keep true), its focused entity (checked as `check_focus` does) and
    whether a user message failed, in one round trip; `NotFoundError` if the session is not theirs
    or its focus is gone."""
    statement = _SESSION_STATE.get(session.get_bind().dialect.name, _SESSION_STATE["sqlite"])
    rows = await statement.rows(session, {"user_id": user_id, "sid": sid})
    if not rows:
        raise NotFoundError("session", sid)
    chat_values, message_values, focus_values = parts(rows[0], _CHAT, _MESSAGE, _FOCUS)
    record = _CHAT.load(session, chat_values)
    message = _MESSAGE.load(session, message_values)
    entity = _FOCUS.load(session, focus_values)
    assert record is not None  # the row is the session's
    any_failed = rows[0][-1]
    if record.focus_kind == "project" and record.focus_id is not None:
        _check_project_focus(record.project_id, record.focus_id)
    if record.focus_kind not in (None, "project") and entity is None:
        raise NotFoundError(record.focus_kind, record.focus_id)
    return SessionState(record, message, entity, bool(any_failed))


async def get_session(session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str) -> ChatSession:
    """One of the user's chat sessions, or `NotFoundError`."""
    sid = as_uuid(session_id, "session")
    chat = await find_session(session, user_id, sid)
    if chat is None:
        raise NotFoundError("session", sid)
    return chat


async def list_messages(
    session: AsyncSession,
    user_id: uuid.UUID,
    session_id: uuid.UUID | str,
    *,
    after_seq: int = 0,
    limit: int = 500,
) -> Sequence[Message]:
    """A session's messages in order (without those an edit superseded)."""
    chat = await get_session(session, user_id, session_id)
    result = await session.execute(
        select(Message)
        .where(Message.session_id == chat.id, Message.seq > after_seq, Message.superseded_at.is_(None))
        .order_by(Message.seq)
        .limit(limit)
    )
    return result.scalars().all()


async def record_transition(
    session: AsyncSession,
    user_id: uuid.UUID,
    session_id: uuid.UUID | str,
    to_agent: str,
    reason: str | None = None,
    message_id: uuid.UUID | None = None,
) -> AgentTransition | None:
    """Switch the active agent and record why; switching to the current agent records nothing."""
    check_agent(to_agent)
    chat = await get_session(session, user_id, session_id)
    if chat.active_agent == to_agent:
        return None
    transition = AgentTransition(
        session_id=chat.id,
        from_agent=chat.active_agent,
        to_agent=to_agent,
        reason=reason,
        message_id=message_id,
    )
    chat.active_agent = to_agent
    session.add(transition)
    await session.flush()
    return transition


async def list_transitions(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str
) -> Sequence[AgentTransition]:
    """A session's agent switches in order."""
    chat = await get_session(session, user_id, session_id)
    result = await session.execute(
        select(AgentTransition)
        .where(AgentTransition.session_id == chat.id)
        .order_by(AgentTransition.created_at, AgentTransition.id)
    )
    return result.scalars().all()


async def rewind_to_user_message(
    session: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID | str, ordinal: int
) -> ChatSession:
    """Drop everything after the session's `ordinal`-th user message (1-based), so that message is
    the latest and unanswered again (regenerating a reply); a summary past that point goes too."""
    record = await get_session(session, user_id, session_id)
    if ordinal < 1:
        raise ValidationError("a regenerate request must include the user message to answer again")
    users = (
        await session.execute(
            select(Message.seq)
            .where(Message.session_id == record.id, Message.role == "user")
            .order_by(Message.seq)
            .offset(ordinal - 1)
            .limit(1)
        )
    ).scalar_one_or_none()
    if users is None:
        raise ValidationError(f"the session has no user message number {ordinal} to regenerate a reply to")
    await session.execute(delete(Message).where(Message.session_id == record.id, Message.seq > users))
    await session.execute(
        delete(SessionSummary).where(
            SessionSummary.session_id == record.id, SessionSummary.covered_through_seq > users
        )
    )
    record.message_count = users
    return record
