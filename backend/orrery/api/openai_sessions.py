"""The server-side session an OpenAI-style request runs on (chat completions and Responses).

With an `X-Orrery-Session` header, that session; otherwise one session per conversation: per (API
key's user, `user` field, text of the client's **first** user message), so clients that resend the
whole chat map each chat to one session. The id is deterministic (UUIDv5), so concurrent first
requests in any process converge on one session. A chat that must not be remembered across chats
(`store: false`) derives a session of its own, created with `remember=False`.
"""

from __future__ import annotations

import uuid

from sqlalchemy.exc import IntegrityError

from orrery.db.engine import Database
from orrery.repo import chat, identity

_CONVERSATIONS = uuid.UUID("6f1d3a52-43c2-4c55-9a36-0a8f4f7c2e11")
"""UUIDv5 namespace of sessions derived from a conversation."""


def conversation_session_id(
    user_id: uuid.UUID, client_user: str | None, first_message: str, *, remember: bool = True
) -> uuid.UUID:
    """The session a conversation maps to: stable across requests, processes and restarts."""
    forget = "" if remember else "\x1fremember=false"
    return uuid.uuid5(_CONVERSATIONS, f"{user_id}\x1f{client_user or ''}\x1f{first_message}{forget}")


async def session_for(
    db: Database,
    user_id: uuid.UUID,
    header: str | None,
    client_user: str | None,
    first: str,
    *,
    remember: bool = True,
) -> uuid.UUID:
    """The header's session, else get-or-create the conversation's (race-free: fixed primary key)."""
    if header:
        async with db.sessions() as s:
            return (await chat.get_session(s, user_id, header)).id
    sid = conversation_session_id(user_id, client_user, first, remember=remember)
    async with db.sessions() as s:
        if await chat.find_session(s, user_id, sid) is not None:
            return sid
    try:
        async with db.transaction() as s:
            projects = await identity.list_projects(s, user_id)
            title = f"openai: {' '.join(first.split())[:280]}"
            record = await chat.create_session(
                s, user_id, project_id=projects[-1].id if projects else None, title=title, session_id=sid
            )
            record.remember = remember
    except IntegrityError:  # a concurrent request created it first
        async with db.sessions() as s:
            await chat.get_session(s, user_id, sid)
    return sid
