"""The "What Orrery remembers about you" page: see, correct and forget remembered facts and the
person's standing instructions and preferences (each write
behind the session cookie and the page's CSRF token, scoped to the signed-in person)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import RedirectResponse

from orrery.errors import ValidationError
from orrery.repo import facts
from orrery.repo.identity import list_projects
from orrery.web.deps import CsrfUser, WebRead, WebRoute, WebTx, WebUser, render

router = APIRouter(route_class=WebRoute, include_in_schema=False)
PAGE_PATH = "/me/facts"
FactText = Annotated[str, Form(max_length=facts.MAX_FACT_CHARS)]
Short = Annotated[str, Form(max_length=facts.MAX_SUBJECT_CHARS)]


def _back() -> Response:
    return RedirectResponse(PAGE_PATH, status_code=303)


def _date(value: str) -> datetime | None:
    if not value.strip():
        return None
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValidationError(f"{value!r} is not a date (YYYY-MM-DD)") from None


def _kind(value: str) -> str | None:
    """The kind chosen on the page ('' keeps it as it is, or a plain fact when adding)."""
    return facts.clean_kind(value) if value.strip() else None


@router.get(PAGE_PATH)
async def page(
    request: Request, web: WebUser, session: WebRead, history: bool = False, kind: str = ""
) -> Response:
    """Current facts, instructions and preferences (one kind with `kind`; with `history` the older
    versions newer ones replaced), with edit and forget forms."""
    rows = await facts.list_facts(session, web.user.id, history=history, kind=_kind(kind))
    projects = {p.id: p.name for p in await list_projects(session, web.user.id)}
    return render(
        request,
        "facts.html",
        user=web.user,
        csrf=request.state.csrf,
        facts=rows,
        history=history,
        kind=kind,
        kinds=facts.FACT_KINDS,
        projects=projects,
    )


@router.post(PAGE_PATH)
async def add(
    web: CsrfUser,
    session: WebTx,
    text: FactText = "",
    subject: Short = "",
    valid_from: Short = "",
    kind: Short = "",
    project_id: Short = "",
) -> Response:
    """Remember a fact, instruction or preference typed in by hand (no source chat); an instruction
    or preference holds in the chosen project, or in every project."""
    await facts.create_fact(
        session,
        web.user.id,
        text,
        subject=subject or None,
        valid_from=_date(valid_from),
        kind=_kind(kind),
        project_id=await facts.checked_project(session, web.user.id, project_id or None),
    )
    return _back()


@router.post(PAGE_PATH + "/{fact_id}/edit")
async def edit(
    fact_id: str,
    web: CsrfUser,
    session: WebTx,
    text: FactText = "",
    subject: Short = "",
    valid_from: Short = "",
    kind: Short = "",
    project_id: Short = "",
) -> Response:
    """Correct a fact in place (an empty subject or date clears it; an empty project: every project)."""
    await facts.update_fact(
        session,
        web.user.id,
        fact_id,
        text=text,
        subject=subject or None,
        valid_from=_date(valid_from),
        kind=_kind(kind),
        project_id=project_id or None,
    )
    return _back()


@router.post(PAGE_PATH + "/{fact_id}/forget")
async def forget(fact_id: str, web: CsrfUser, session: WebTx) -> Response:
    """Forget a fact and the older versions it replaced."""
    await facts.delete_fact(session, web.user.id, fact_id)
    return _back()
