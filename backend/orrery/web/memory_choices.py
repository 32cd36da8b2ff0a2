"""The person's memory page (`/me/memory`): whether their chats recall their other chats, and
chats of other projects; the same choices as `GET`/`PATCH /v1/me/memory`, as a plain form."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import RedirectResponse

from orrery.repo import identity
from orrery.web.deps import CsrfUser, WebRead, WebRoute, WebTx, WebUser, render

router = APIRouter(route_class=WebRoute, include_in_schema=False)
Box = Annotated[str, Form(max_length=10)]


@router.get("/me/memory")
async def memory_page(request: Request, web: WebUser, session: WebRead, saved: bool = False) -> Response:
    """The two switches, as they are now."""
    choices = await identity.memory_choices(session, web.user.id)
    return render(
        request, "memory.html", user=web.user, csrf=request.state.csrf, choices=choices, saved=saved
    )


@router.post("/me/memory")
async def save_memory(web: CsrfUser, session: WebTx, across: Box = "", other_projects: Box = "") -> Response:
    """Save both switches (an unticked box is not sent: off)."""
    await identity.set_memory_choices(
        session, web.user.id, recall_across_chats=bool(across), recall_other_projects=bool(other_projects)
    )
    return RedirectResponse("/me/memory?saved=true", status_code=303)
