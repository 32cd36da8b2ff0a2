"""Writes from the browser, each behind the session cookie AND the page's CSRF token: sessions
(create, rename, remember or not, delete), focus, agent and strategy, knowledge capture, and the
streamed turn, which runs through the JSON API's own turn endpoint."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Form, Header, Path, Request, Response
from fastapi.responses import RedirectResponse, StreamingResponse
from pydantic import AfterValidator

from orrery.db.engine import Database
from orrery.errors import ValidationError
from orrery.knowledge.entries import update_entry
from orrery.repo import chat
from orrery.repo import sessions as repo
from orrery.services import turns
from orrery.services.deps import SettingsDep
from orrery.services.forget import forget_chat
from orrery.services.limits import MAX_INT
from orrery.validation import check_text
from orrery.web.deps import CsrfUser, WebRoute, WebTx, render

router = APIRouter(route_class=WebRoute, include_in_schema=False)
Text = Annotated[str, AfterValidator(check_text), Form(max_length=300)]


def _back(session_id: uuid.UUID | str) -> Response:
    return RedirectResponse(f"/s/{session_id}", status_code=303)


@router.post("/sessions")
async def create(
    web: CsrfUser, session: WebTx, project_id: Text = "", title: Text = "", dont_remember: Text = ""
) -> Response:
    """A new session in the chosen project (or none); the "Don't remember this chat" box ticked
    opens it not remembered."""
    record = await chat.create_session(
        session,
        web.user.id,
        project_id=project_id or None,
        title=" ".join(title.split()) or None,
        remember=not dont_remember,
    )
    return _back(record.id)


@router.post("/s/{session_id}/rename")
async def rename(session_id: str, web: CsrfUser, session: WebTx, title: Text = "") -> Response:
    """Set or clear the title."""
    await repo.rename_session(session, web.user.id, session_id, title)
    return _back(session_id)


@router.post("/s/{session_id}/remember")
async def remember(session_id: str, web: CsrfUser, session: WebTx, remember: Text = "") -> Response:
    """The chat page's "Remember this chat" switch: `true` remembers it, `false` does not."""
    if remember not in ("true", "false"):
        raise ValidationError("remember must be true or false")
    await repo.set_remember(session, web.user.id, session_id, remember == "true")
    return _back(session_id)


@router.post("/s/{session_id}/delete")
async def delete(
    session_id: str, web: CsrfUser, session: WebTx, settings: SettingsDep, forget_facts: Text = ""
) -> Response:
    """Delete the session (and, when ticked, the facts remembered from it) and go to the next one."""
    await forget_chat(session, settings, web.user.id, session_id, forget_facts=forget_facts == "true")
    return RedirectResponse("/", status_code=303)


@router.post("/s/{session_id}/settings")
async def settings(
    session_id: str, web: CsrfUser, session: WebTx, agent: Text = "auto", strategy: Text = ""
) -> Response:
    """Choose who answers next (automatic routing or one agent) and how history is scoped."""
    from orrery.memory.scoping import get_strategy
    from orrery.roster import get_agent

    record = await chat.get_session(session, web.user.id, session_id)
    record.scoping_strategy = get_strategy(strategy).name if strategy else None
    if agent == "auto":
        await repo.use_automatic_agent(session, web.user.id, record.id)
    elif agent != record.active_agent:
        await chat.record_transition(
            session, web.user.id, record.id, get_agent(agent).id, "chosen in the web app"
        )
    return _back(record.id)


@router.post("/s/{session_id}/focus")
async def focus(
    session_id: str, web: CsrfUser, session: WebTx, kind: Text = "", entity_id: Text = ""
) -> Response:
    """Focus an entity of the session's project, or clear the focus (empty kind)."""
    record = await chat.get_session(session, web.user.id, session_id)
    if not kind:
        record.focus_kind, record.focus_id = None, None
        return _back(record.id)
    if record.project_id is None:
        raise ValidationError("a focused session needs a project: start a session in a project")
    await chat.check_focus(session, web.user.id, record.project_id, kind, entity_id)
    record.focus_kind = kind
    record.focus_id = record.project_id if kind == "project" else uuid.UUID(entity_id)
    return _back(record.id)


@router.post("/s/{session_id}/knowledge")
async def capture_knowledge(
    request: Request,
    session_id: str,
    web: CsrfUser,
    session: WebTx,
    code: Annotated[str, AfterValidator(check_text), Form(max_length=40)] = "",
    code_paths: Annotated[str, AfterValidator(check_text), Form(max_length=20_000)] = "",
    correction: Annotated[str, AfterValidator(check_text), Form(max_length=2_000)] = "",
) -> Response:
    """Add code paths and/or a correction to a knowledge entry (the feedback loop, with provenance)."""
    record = await chat.get_session(session, web.user.id, session_id)
    if record.project_id is None:
        raise ValidationError("knowledge lives in a project: start a session in a project")
    paths = [p.strip() for p in code_paths.replace(",", "\n").splitlines() if p.strip()]
    entry = await update_entry(
        session,
        web.user.id,
        record.project_id,
        code.strip(),
        add_code_paths=paths or None,
        correction=correction or None,
        session_id=record.id,
    )
    from orrery.repo.scope import require_project

    project = await require_project(session, web.user.id, record.project_id)
    return render(
        request,
        "_captured.html",
        entry=entry,
        current=record,
        project=project.name,
        added=paths,
        correction=" ".join(correction.split()),
    )


@router.post("/s/{session_id}/say")
async def say(
    request: Request,
    session_id: str,
    web: CsrfUser,
    content: Annotated[str, AfterValidator(check_text), Form(min_length=1, max_length=20_000)],
) -> Response:
    """The composer without JavaScript: run the whole turn, then show the session again."""
    orchestrator = request.app.state.orchestrator
    result = await turns.run_turn(
        orchestrator, web.user.id, session_id, turns.MessageIn(content=content), accept="application/json"
    )
    if isinstance(result, Response):  # the model failed; the message is kept for a retry
        raise ValidationError("the model failed to answer; send the message again to retry")
    return _back(session_id)


@router.post("/s/{session_id}/turn")
async def turn(
    request: Request,
    session_id: str,
    body: turns.MessageIn,
    web: CsrfUser,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> Response:
    """Run a turn through the API's SSE endpoint; the `context` event's receipt is kept for the
    inspector's "last turn" view."""
    response = await turns.run_turn(  # the full prompt: the inspector's "last turn" shows it
        request.app.state.orchestrator,
        web.user.id,
        session_id,
        body,
        idempotency_key=idempotency_key,
        context="full",
    )
    return _keeping_receipt(request, web.user.id, session_id, response)


@router.post("/s/{session_id}/m/{seq}/edit")
async def edit(
    request: Request,
    session_id: str,
    seq: Annotated[int, Path(ge=1, le=MAX_INT)],
    body: turns.MessageIn,
    web: CsrfUser,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> Response:
    """Edit-and-resend the last user message: the old one and its reply are kept, superseded, and
    the turn runs again with the new text (streamed like `/turn`)."""
    response = await turns.edit_and_rerun(
        request.app.state.orchestrator,
        web.user.id,
        session_id,
        seq,
        body,
        idempotency_key=idempotency_key,
        context="full",
    )
    return _keeping_receipt(request, web.user.id, session_id, response)


def _keeping_receipt(request: Request, user_id: uuid.UUID, session_id: str, response: Any) -> Response:
    """Pass the turn's events on; the `context` event's receipt is stored for "last turn"."""
    if not isinstance(response, StreamingResponse):
        return response  # type: ignore[no-any-return]  # JSON answers never reach these routes
    database: Database = request.app.state.db
    upstream = response.body_iterator

    async def stream() -> AsyncIterator[str | bytes]:
        async for chunk in upstream:
            text = chunk if isinstance(chunk, str) else bytes(chunk).decode()
            if text.startswith("event: context\n"):
                await _keep_receipt(database, user_id, session_id, text)
            yield text

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


async def _keep_receipt(database: Database, user_id: uuid.UUID, session_id: str, event: str) -> None:
    data: dict[str, Any] = json.loads(event.split("data: ", 1)[1])
    if isinstance(data.get("receipt"), dict):
        kept = {k: data.get(k) for k in ("receipt", "system_prompt", "messages")}
        async with database.transaction() as s:
            await repo.save_turn_receipt(s, user_id, session_id, kept)
