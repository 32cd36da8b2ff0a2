"""A session as a list row, the shape the API, the web app and `orrery sessions list --json` share."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from orrery.repo import sessions as repo


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
    remember: bool
    """False: "don't remember this chat" (never recalled in another chat, no facts, no patterns)."""
    created_at: datetime
    updated_at: datetime


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
        remember=chat.remember,
        created_at=chat.created_at,
        updated_at=chat.updated_at,
    )
