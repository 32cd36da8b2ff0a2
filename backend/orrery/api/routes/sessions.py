"""Listing and deleting chat sessions (renaming is `PATCH /v1/sessions/{id}` with a `title`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from orrery.api.errors import ERROR_RESPONSES
from orrery.repo import sessions as repo
from orrery.services.deps import CurrentUser, ReadSessionDep, SettingsDep, WriteSessionDep
from orrery.services.forget import forget_chat
from orrery.services.limits import MAX_INT
from orrery.services.sessions import SessionListItemOut, list_item_out

router = APIRouter(prefix="/v1/sessions", tags=["chat"], responses=ERROR_RESPONSES)


class SessionPage(BaseModel):
    """A page of sessions, most recently active first."""

    items: list[SessionListItemOut]
    limit: int
    offset: int
    next_offset: int | None


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
async def delete_session(
    session_id: str,
    user: CurrentUser,
    session: WriteSessionDep,
    settings: SettingsDep,
    forget_facts: bool = False,
) -> Response:
    """Delete the session and its messages (it leaves recall at once); `forget_facts=true` also
    forgets the facts said in it (`GET /v1/me/facts?session_id=` lists them first). A learned summary
    that drew on it is rebuilt. Another user's session answers 404."""
    await forget_chat(session, settings, user.id, session_id, forget_facts=forget_facts)
    return Response(status_code=204)
