"""The server-side session an OpenAI-style request runs on (chat completions and Responses).

With an `X-Orrery-Session` header, that session; otherwise one session per conversation: per (API
key's user, `user` field, text of the client's **first** user message), so clients that resend the
whole chat map each chat to one session. The id is deterministic (UUIDv5), so concurrent first
requests in any process converge on one session. `store: false` opens the conversation's chat not
remembered across chats, or switches an existing one off (never back on: only the person does that).
"""

from __future__ import annotations

import uuid

from sqlalchemy.exc import IntegrityError

from orrery.db.engine import Database
from orrery.repo import chat, identity
from orrery.repo.sessions import set_remember

_CONVERSATIONS = uuid.UUID("6f1d3a52-43c2-4c55-9a36-0a8f4f7c2e11")
"""UUIDv5 namespace of sessions derived from a conversation."""


def conversation_session_id(user_id: uuid.UUID, client_user: str | None, first_message: str) -> uuid.UUID:
    """The session a conversation maps to: stable across requests, processes and restarts."""
    return uuid.uuid5(_CONVERSATIONS, f"{user_id}\x1f{client_user or ''}\x1f{first_message}")


async def session_for(
    db: Database,
    user_id: uuid.UUID,
    header: str | None,
    client_user: str | None,
    first: str,
    *,
    remember: bool = True,
) -> uuid.UUID:
    """The header's session, else get-or-create the conversation's (race-free: fixed primary key);
    `remember=False` (`store: false`) opens it not remembered, or switches an existing one off."""
    if header:
        return await _existing(db, user_id, header, remember)
    sid = conversation_session_id(user_id, client_user, first)
    async with db.sessions() as s:
        found = await chat.find_session(s, user_id, sid)
    if found is not None:  # `store: false` on a remembered chat switches it off; nothing else writes
        return sid if remember or not found.remember else await _existing(db, user_id, sid, remember)
    try:
        async with db.transaction() as s:
            projects = await identity.list_projects(s, user_id)
            title = f"openai: {' '.join(first.split())[:280]}"
            await chat.create_session(
                s,
                user_id,
                project_id=projects[-1].id if projects else None,
                title=title,
                session_id=sid,
                remember=remember,
            )
    except IntegrityError:  # a concurrent request created it first
        return await _existing(db, user_id, sid, remember)
    return sid


async def _existing(db: Database, user_id: uuid.UUID, sid: uuid.UUID | str, remember: bool) -> uuid.UUID:
    """The caller's existing session (else `NotFoundError`), switched to not remembered when asked."""
    if remember:
        async with db.sessions() as s:
            return (await chat.get_session(s, user_id, sid)).id
    async with db.transaction() as s:
        return (await set_remember(s, user_id, sid, False)).id
