"""`/v1/me/facts`: what Orrery remembers about the caller — see, add, correct and forget facts.

Every route is scoped to the caller: another person's fact id answers 404, exactly as a missing one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from orrery.api.errors import ERROR_RESPONSES
from orrery.repo import facts as repo
from orrery.services.deps import CurrentUser, ReadSessionDep, WriteSessionDep
from orrery.services.facts import fact_out
from orrery.services.limits import BoundedDatetime
from orrery.validation import StorableBody, Text

router = APIRouter(prefix="/v1/me/facts", tags=["memory"], responses=ERROR_RESPONSES)
FactText = Annotated[Text, Field(min_length=1, max_length=repo.MAX_FACT_CHARS)]
Subject = Annotated[Text, Field(max_length=repo.MAX_SUBJECT_CHARS)]
Kind = Literal["fact", "instruction", "preference"]
"""A plain fact, or a standing instruction or preference the person expects to hold in later chats."""
ProjectId = Annotated[str, Field(max_length=64)]


class FactSourceOut(BaseModel):
    """The chat and the person's message a fact was said in."""

    session_id: str
    seq: int | None


class FactOut(BaseModel):
    """A remembered fact with its lineage (`superseded_by` is set on history)."""

    id: str
    text: str
    kind: Kind
    project_id: str | None
    """The project a standing instruction or preference holds in; null: every project."""
    subject: str | None
    source: FactSourceOut | None
    """Null when the fact was added by hand (the facts page, the CLI, MCP)."""
    created_at: datetime
    valid_from: datetime | None
    superseded_by: str | None
    superseded_at: datetime | None


class FactIn(StorableBody):
    """A fact to remember; a newer fact on the same `subject`, or naming the one it `supersedes`,
    replaces the older one (kept as history)."""

    text: FactText
    kind: Kind = "fact"
    project_id: ProjectId | None = None
    """For an instruction or preference: the project it holds in (one you belong to); null: every project."""
    subject: Subject | None = None
    valid_from: BoundedDatetime | None = None
    supersedes: str | None = Field(default=None, max_length=64)


class FactPatch(StorableBody):
    """Fields to correct; `text` and `kind` cannot be null, `subject`, `valid_from` and `project_id`
    (every project) may be cleared with null."""

    text: FactText | SkipJsonSchema[None] = None
    kind: Kind | SkipJsonSchema[None] = None
    project_id: ProjectId | None = None
    subject: Subject | None = None
    valid_from: BoundedDatetime | None = None

    @model_validator(mode="after")
    def _text_not_null(self) -> FactPatch:
        if "text" in self.model_fields_set and self.text is None:
            raise ValueError("text cannot be null; omit it to keep the text")
        if "kind" in self.model_fields_set and self.kind is None:
            raise ValueError("kind cannot be null; omit it to keep the kind")
        return self


@router.get("", response_model=list[FactOut], summary="What Orrery remembers about you")
async def list_facts(
    user: CurrentUser,
    session: ReadSessionDep,
    session_id: str | None = None,
    include_history: bool = False,
    kind: Kind | None = None,
) -> list[dict[str, Any]]:
    """Your current facts, oldest first; `include_history=true` adds the superseded ones;
    `session_id` lists only those said in that chat (what `DELETE /v1/sessions/{id}?forget_facts=true`
    would forget); `kind` only facts, instructions or preferences."""
    return [
        fact_out(f)
        for f in await repo.list_facts(
            session, user.id, history=include_history, source_session_id=session_id, kind=kind
        )
    ]


@router.post("", status_code=201, response_model=FactOut, summary="Remember a fact")
async def create_fact(body: FactIn, user: CurrentUser, session: WriteSessionDep) -> dict[str, Any]:
    """Add a fact, instruction or preference by hand (no source chat)."""
    fact, _ = await repo.create_fact(
        session,
        user.id,
        body.text,
        subject=body.subject,
        valid_from=body.valid_from,
        supersedes=body.supersedes,
        kind=body.kind,
        project_id=await repo.checked_project(session, user.id, body.project_id),
    )
    return fact_out(fact)


@router.get("/{fact_id}", response_model=FactOut, summary="One fact")
async def get_fact(fact_id: str, user: CurrentUser, session: ReadSessionDep) -> dict[str, Any]:
    """One of your facts, current or history."""
    return fact_out(await repo.get_fact(session, user.id, fact_id))


@router.patch("/{fact_id}", response_model=FactOut, summary="Correct a fact")
async def patch_fact(
    fact_id: str, body: FactPatch, user: CurrentUser, session: WriteSessionDep
) -> dict[str, Any]:
    """Correct the text, kind, project, subject or date in place; its lineage stays as it is."""
    given = body.model_fields_set
    fact = await repo.update_fact(
        session,
        user.id,
        fact_id,
        text=body.text,
        subject=body.subject if "subject" in given else repo.UNSET,
        valid_from=body.valid_from if "valid_from" in given else repo.UNSET,
        kind=body.kind,
        project_id=body.project_id if "project_id" in given else repo.UNSET,
    )
    return fact_out(fact)


@router.delete("/{fact_id}", status_code=204, summary="Forget a fact")
async def delete_fact(fact_id: str, user: CurrentUser, session: WriteSessionDep) -> Response:
    """Forget the fact and the older versions it replaced."""
    await repo.delete_fact(session, user.id, fact_id)
    return Response(status_code=204)
