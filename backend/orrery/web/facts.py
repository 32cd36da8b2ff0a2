"""The "What Orrery remembers about you" page: see, correct and forget remembered facts (each write
behind the session cookie and the page's CSRF token, scoped to the signed-in person)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import RedirectResponse

from orrery.errors import ValidationError
from orrery.repo import facts
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


@router.get(PAGE_PATH)
async def page(request: Request, web: WebUser, session: WebRead, history: bool = False) -> Response:
    """Current facts (and, on request, the history newer ones replaced), with edit and forget forms."""
    rows = await facts.list_facts(session, web.user.id, history=history)
    return render(request, "facts.html", user=web.user, csrf=request.state.csrf, facts=rows, history=history)


@router.post(PAGE_PATH)
async def add(
    web: CsrfUser, session: WebTx, text: FactText = "", subject: Short = "", valid_from: Short = ""
) -> Response:
    """Remember a fact typed in by hand (no source chat)."""
    await facts.create_fact(session, web.user.id, text, subject=subject or None, valid_from=_date(valid_from))
    return _back()


@router.post(PAGE_PATH + "/{fact_id}/edit")
async def edit(
    fact_id: str,
    web: CsrfUser,
    session: WebTx,
    text: FactText = "",
    subject: Short = "",
    valid_from: Short = "",
) -> Response:
    """Correct a fact in place (an empty subject or date clears it)."""
    await facts.update_fact(
        session, web.user.id, fact_id, text=text, subject=subject or None, valid_from=_date(valid_from)
    )
    return _back()


@router.post(PAGE_PATH + "/{fact_id}/forget")
async def forget(fact_id: str, web: CsrfUser, session: WebTx) -> Response:
    """Forget a fact and the older versions it replaced."""
    await facts.delete_fact(session, web.user.id, fact_id)
    return _back()
