"""Listing and deleting chat sessions (renaming is `PATCH /v1/sessions/{id}` with a `title`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from backend.api.deps import CurrentUser, ReadSessionDep, WriteSessionDep
from backend.api.errors import ERROR_RESPONSES
from backend.api.limits import MAX_INT
from backend.repo import sessions as repo

router = APIRouter(prefix="/v1/sessions", tags=["chat"], responses=ERROR_RESPONSES)


class SessionFocusOut(BaseModel):
    """A session's focus with its name (null when the entity was deleted), state and due date."""

    kind: str
    id: str
    name: str | None
    state: str | None
    due_at: datetime | None


class SessionListItemOut(BaseModel):
    """One session in the list."""

    id: str
    title: str | None
    project_id: str | None
    project_name: str | None
    focus: SessionFocusOut | None
    active_agent: str | None
    scoping_strategy: str | None
    message_count: int
    created_at: datetime
    updated_at: datetime


class SessionPage(BaseModel):
    """A page of sessions, most recently active first."""

    items: list[SessionListItemOut]
    limit: int
    offset: int
    next_offset: int | None


def list_item_out(item: repo.SessionListItem) -> SessionListItemOut:
    """The JSON shape of one list row (shared with the web app)."""
    chat, focus = item.session, item.focus
    return SessionListItemOut(
        id=str(chat.id),
        title=chat.title,
        project_id=str(chat.project_id) if chat.project_id else None,
        project_name=item.project_name,
        focus=SessionFocusOut(
            kind=focus.kind, id=str(focus.id), name=focus.name, state=focus.state, due_at=focus.due_at
        )
        if focus
        else None,
        active_agent=chat.active_agent,
        scoping_strategy=chat.scoping_strategy,
        message_count=chat.message_count,
        created_at=chat.created_at,
        updated_at=chat.updated_at,
    )


@router.get("", response_model=SessionPage, summary="List your chat sessions")
async def list_sessions(
    user: CurrentUser,
    session: ReadSessionDep,
    project_id: str | None = None,
    limit: Annotated[int, Query(ge=1, le=repo.MAX_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_INT)] = 0,
) -> SessionPage:
    """Your sessions, most recently active first, with title and focus; `next_offset` pages on."""
    items = await repo.list_sessions(session, user.id, project_id=project_id, limit=limit + 1, offset=offset)
    more = len(items) > limit
    return SessionPage(
        items=[list_item_out(i) for i in items[:limit]],
        limit=limit,
        offset=offset,
        next_offset=offset + limit if more else None,
    )


@router.delete("/{session_id}", status_code=204, summary="Delete a chat session")
async def delete_session(session_id: str, user: CurrentUser, session: WriteSessionDep) -> Response:
    """Delete the session and its messages; another user's session answers 404."""
    await repo.delete_session(session, user.id, session_id)
    return Response(status_code=204)
