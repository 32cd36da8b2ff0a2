"""`GET` and `PATCH /v1/me/memory`: what the caller lets their chats recall from their other chats.

Each person's own: the route reads and writes only the caller's row. Unknown fields are refused
(422), so a misspelt switch never silently leaves memory on."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field, StrictBool

from orrery.api.errors import ERROR_RESPONSES
from orrery.repo import identity
from orrery.services.deps import CurrentUser, ReadSessionDep, WriteSessionDep
from orrery.validation import StorableBody

router = APIRouter(prefix="/v1/me/memory", tags=["memory"], responses=ERROR_RESPONSES)


class MemoryChoicesOut(BaseModel):
    """The caller's memory choices."""

    recall_across_chats: bool
    """A new chat may recall what the person said in their other chats (default true)."""
    recall_other_projects: bool
    """...including chats in other projects, and a project chat from chats without one (default false)."""


class MemoryChoicesPatch(StorableBody):
    """The choices to change; a field left out (or null) stays as it is."""

    recall_across_chats: StrictBool | None = Field(
        default=None, description="recall from your other chats at all"
    )
    recall_other_projects: StrictBool | None = Field(
        default=None, description="also from chats in other projects (and without a project)"
    )


@router.get("", response_model=MemoryChoicesOut, summary="Your memory choices")
async def get_memory(user: CurrentUser, session: ReadSessionDep) -> MemoryChoicesOut:
    """Whether your chats recall your other chats, and chats of other projects."""
    choices = await identity.memory_choices(session, user.id)
    return MemoryChoicesOut(**vars(choices))


@router.patch("", response_model=MemoryChoicesOut, summary="Change your memory choices")
async def patch_memory(
    body: MemoryChoicesPatch, user: CurrentUser, session: WriteSessionDep
) -> MemoryChoicesOut:
    """Turn recall across chats (or from other projects) on or off, from every chat's next turn."""
    choices = await identity.set_memory_choices(
        session,
        user.id,
        recall_across_chats=body.recall_across_chats,
        recall_other_projects=body.recall_other_projects,
    )
    return MemoryChoicesOut(**vars(choices))
