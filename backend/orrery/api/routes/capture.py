"""`POST /v1/projects/{project_id}/kb/entries`: capture a knowledge entry by collection slug.

The door of the `create_entry` tool for people and clients: the same validation and provenance
(the caller; a chat of theirs and its message seq when given). The older `POST /v1/kb/entries`
takes a collection id and a code; this one takes a slug and finds the next free code itself.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import Field

from orrery.api.errors import ERROR_RESPONSES
from orrery.api.routes.resources import CodePath
from orrery.knowledge.capture import MAX_DESCRIPTION, MAX_LINKS, MAX_NAME, create_entry
from orrery.knowledge.entries import MAX_CODE_PATHS, FullEntry
from orrery.repo import chat
from orrery.repo.knowledge import CODE_PATTERN, SLUG_PATTERN
from orrery.services.deps import CurrentUser, WriteSessionDep
from orrery.validation import StorableBody, Text

router = APIRouter(prefix="/v1", tags=["knowledge"], responses=ERROR_RESPONSES)
EntryCode = Annotated[Text, Field(max_length=16, pattern=CODE_PATTERN.pattern)]


class CaptureIn(StorableBody):
    """A new entry: where it goes, what it says, and where it came from."""

    collection: Text = Field(
        max_length=64,
        pattern=SLUG_PATTERN.pattern,
        description="A slug; a standard one (business-rules, glossary, ...) is made on first use.",
    )
    name: Text = Field(min_length=1, max_length=MAX_NAME, pattern=r"\S")
    description: Text = Field(min_length=1, max_length=MAX_DESCRIPTION, pattern=r"\S")
    code: EntryCode | None = Field(default=None, description="Leave out for the collection's next free code.")
    code_paths: list[CodePath] = Field(default_factory=list, max_length=MAX_CODE_PATHS)
    links: list[EntryCode] = Field(default_factory=list, max_length=MAX_LINKS)
    session_id: uuid.UUID | None = Field(default=None, description="The caller's chat it was learned in.")
    seq: int | None = Field(default=None, ge=1, le=2**31 - 1, description="That chat's message.")


@router.post(
    "/projects/{project_id}/kb/entries",
    status_code=201,
    response_model=FullEntry,
    summary="Capture a knowledge entry",
)
async def capture_entry(
    project_id: str, body: CaptureIn, user: CurrentUser, session: WriteSessionDep
) -> dict[str, Any]:
    """Create an entry in a collection by slug, recorded with provenance."""
    if body.session_id is not None:
        await chat.get_session(session, user.id, body.session_id)  # another person's chat: 404
    entry = await create_entry(
        session,
        user.id,
        project_id,
        collection=body.collection,
        name=body.name,
        description=body.description,
        code=body.code,
        code_paths=list(body.code_paths),
        links=list(body.links),
        session_id=body.session_id,
        seq=body.seq,
    )
    return asdict(entry)
