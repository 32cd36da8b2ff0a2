"""Pages and fragments the browser reads: the app shell with sessions, chat and focus; earlier
messages; one rendered message; focus search results; and the context inspector."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import RedirectResponse

from orrery.db.models import ChatSession
from orrery.errors import NotFoundError, ValidationError
from orrery.graph.linked import load_linked_entities_context
from orrery.memory.scoping import strategy_names
from orrery.repo import chat, identity
from orrery.repo import sessions as repo
from orrery.roster import AGENTS
from orrery.services import context_view
from orrery.services.deps import SettingsDep
from orrery.services.limits import MAX_INT
from orrery.vocabulary import ENTITY_KINDS
from orrery.web import views
from orrery.web.deps import WebRead, WebRoute, WebUser, render
from orrery.web.focus_graph import focus_graph, state_class
from orrery.web.labels import receipt_keys, resolve_labels
from orrery.web.tool_knowledge import last_reply_reads

router = APIRouter(route_class=WebRoute, include_in_schema=False)
PAGE = 30
SIDEBAR_PAGE = 30


async def _shell(request: Request, session: Any, web: Any, chat_record: ChatSession | None) -> dict[str, Any]:
    """What every app page shows: the sessions list, projects, agents and strategies."""
    items = await repo.list_sessions(session, web.user.id, limit=SIDEBAR_PAGE + 1)
    projects = await identity.list_projects(session, web.user.id)
    return {
        "user": web.user,
        "csrf": request.state.csrf,
        "sessions": items[:SIDEBAR_PAGE],
        "offset": 0,
        "next_offset": SIDEBAR_PAGE if len(items) > SIDEBAR_PAGE else None,
        "projects": projects,
        "current": chat_record,
        "agents": tuple(AGENTS),  # plugin agents too (loaded at startup)
        "strategies": strategy_names(),
        "kinds": ENTITY_KINDS,
    }


@router.get("/")
async def home(request: Request, web: WebUser, session: WebRead) -> Response:
    """The most recent session, or a start page when there is none."""
    items = await repo.list_sessions(session, web.user.id, limit=1)
    if items:
        return RedirectResponse(f"/s/{items[0].session.id}", status_code=303)
    return render(request, "app.html", **await _shell(request, session, web, None))


@router.get("/sessions/more")
async def more_sessions(
    request: Request, web: WebUser, session: WebRead, offset: Annotated[int, Query(ge=0, le=MAX_INT)] = 0
) -> Response:
    """The next page of the sessions list (the "More chats" button)."""
    items = await repo.list_sessions(session, web.user.id, limit=SIDEBAR_PAGE + 1, offset=offset)
    more = len(items) > SIDEBAR_PAGE
    return render(
        request,
        "_session_items.html",
        sessions=items[:SIDEBAR_PAGE],
        current=None,
        csrf=request.state.csrf,
        offset=offset,
        next_offset=offset + SIDEBAR_PAGE if more else None,
    )


@router.get("/search")
async def search(
    request: Request, web: WebUser, session: WebRead, q: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """The sidebar's search: chats whose title or messages match (the list again when empty)."""
    from orrery.web.search import search_chats

    hits = await search_chats(session, web.user.id, q)
    return render(request, "_search_results.html", hits=hits, q=q.strip())


@router.get("/s/{session_id}")
async def session_page(request: Request, session_id: str, web: WebUser, session: WebRead) -> Response:
    """One session: focus, agent and strategy, the latest messages, and the inspector (loaded on open)."""
    record = await chat.get_session(session, web.user.id, session_id)
    context = await _shell(request, session, web, record)
    messages, more = await repo.messages_page(session, web.user.id, record.id, limit=PAGE)
    since = messages[0].created_at if more and messages else None
    transitions = await repo.transitions_between(session, web.user.id, record.id, since)
    context.update(
        focus=await repo.session_focus(session, web.user.id, record),
        timeline=views.timeline(messages, list(transitions)),
        more=more,
        first_seq=messages[0].seq if messages else None,
        views=views,
    )
    return render(request, "app.html", **context)


@router.get("/s/{session_id}/messages")
async def earlier_messages(
    request: Request,
    session_id: str,
    web: WebUser,
    session: WebRead,
    before: Annotated[int, Query(ge=1, le=2**31)],
) -> Response:
    """A page of earlier messages (the "Show earlier" button)."""
    record = await chat.get_session(session, web.user.id, session_id)
    messages, more = await repo.messages_page(session, web.user.id, record.id, before_seq=before, limit=PAGE)
    transitions = await repo.transitions_between(
        session, web.user.id, record.id, messages[0].created_at if messages else None
    )
    last = messages[-1].created_at if messages else None
    shown = [t for t in transitions if last is None or t.created_at <= last]
    return render(
        request,
        "_messages.html",
        current=record,
        timeline=views.timeline(messages, shown),
        more=more,
        first_seq=messages[0].seq if messages else None,
        views=views,
    )


@router.get("/s/{session_id}/m/{seq}")
async def one_message(
    request: Request,
    session_id: str,
    seq: Annotated[int, Path(ge=0, le=MAX_INT)],
    web: WebUser,
    session: WebRead,
    prompt: Annotated[bool, Query()] = False,
) -> Response:
    """One stored message, rendered (replaces the streamed draft when a turn is done); `prompt`:
    with the user message it answers, so the page learns that message's number (to edit it)."""
    record = await chat.get_session(session, web.user.id, session_id)
    found, _ = await repo.messages_page(session, web.user.id, record.id, before_seq=seq + 1, limit=2)
    if not found or found[-1].seq != seq:
        raise NotFoundError("message", seq)
    messages = found if prompt and found[0].role == "user" and len(found) == 2 else found[-1:]
    transitions = [
        t
        for t in await repo.transitions_between(session, web.user.id, record.id, messages[0].created_at)
        if t.message_id in {m.id for m in messages}
    ]
    return render(
        request,
        "_messages.html",
        current=record,
        timeline=views.timeline(messages, transitions),
        more=False,
        first_seq=None,
        views=views,
    )


@router.get("/s/{session_id}/focus-search")
async def focus_search(
    request: Request,
    session_id: str,
    web: WebUser,
    session: WebRead,
    q: Annotated[str, Query(max_length=200)] = "",
    kind: Annotated[str, Query(max_length=20)] = "",
) -> Response:
    """The project's entities matching a name (and kind), each with a Focus button."""
    record = await chat.get_session(session, web.user.id, session_id)
    found = (
        await repo.search_entities(session, web.user.id, record.project_id, query=q, kind=kind or None)
        if record.project_id
        else []
    )
    return render(request, "_focus_results.html", current=record, results=found, csrf=request.state.csrf, q=q)


@router.get("/s/{session_id}/inspector")
async def inspector(
    request: Request, session_id: str, web: WebUser, session: WebRead, settings: SettingsDep
) -> Response:
    """The next turn's context (assembled exactly as the API does), the last turn's receipt, the
    focus's linked entities and the knowledge packet with the capture form."""
    record = await chat.get_session(session, web.user.id, session_id)
    next_turn = await context_view.next_context(
        session, request.app.state.orchestrator, web.user.id, session_id
    )
    last = await repo.last_turn_receipt(session, web.user.id, record.id)
    linked = None
    if record.focus_kind not in (None, "project") and record.focus_id is not None:
        try:
            linked = await load_linked_entities_context(
                session, web.user.id, record.focus_id, record.focus_kind, record.project_id
            )
        except NotFoundError:
            linked = None  # the focused entity was deleted
    last_receipt = (last.receipt.get("receipt") or {}) if last else {}
    keys = receipt_keys([next_turn["receipt"], last_receipt])
    labels = await resolve_labels(session, web.user.id, record.id, keys)
    return render(
        request,
        "_inspector.html",
        current=record,
        csrf=request.state.csrf,
        next_turn=next_turn,
        next_view=views.receipt_view(next_turn["receipt"], labels, pending=True),
        last_view=views.receipt_view(last_receipt, labels) if last else None,
        graph=focus_graph(linked) if linked else None,
        graph_state=state_class,
        last_turn=last.receipt if last else None,
        last_at=last.created_at if last else None,
        linked=linked,
        packet=record.knowledge_packet,
        tool_reads=[] if record.knowledge_packet else await last_reply_reads(session, record.id),
        codes=views.packet_codes(record.knowledge_packet),
        strategies=strategy_names(),
        views=views,
    )


@router.get("/s/{session_id}/preview")
async def preview(
    request: Request,
    session_id: str,
    web: WebUser,
    session: WebRead,
    settings: SettingsDep,
    scoping: Annotated[str, Query(max_length=64)] = "",
    compare: Annotated[list[str] | None, Query()] = None,
    at: Annotated[str, Query(max_length=12)] = "",
) -> Response:
    """The inspector's "preview with…": one strategy's view of the next turn (or of the turn at
    `at`), or several side by side. The chat's own Scoping setting is untouched; nothing is stored."""
    from orrery.context.compare import GROUPS, compare_strategies, preview_context

    turn = _seq(at)
    names = [n for n in dict.fromkeys([scoping, *(compare or [])]) if n]
    if len(names) > 1:
        found = await compare_strategies(
            session,
            user_id=web.user.id,
            session_id=session_id,
            names=names,
            settings=settings,
            at=turn,
            summarizer=request.app.state.orchestrator.summarizer(),
        )
        keys = {u.key for u in found.units if u.kind == "message"}
        labels = await resolve_labels(session, web.user.id, found.session_id, keys)
        return render(request, "_preview.html", comparison=found, groups=GROUPS, labels=labels)
    wc = await preview_context(
        session,
        user_id=web.user.id,
        session_id=session_id,
        settings=settings,
        scoping=scoping or None,
        at=turn,
        summarizer=request.app.state.orchestrator.summarizer(),
    )
    receipt = wc.receipt.as_dict()
    labels = await resolve_labels(session, web.user.id, uuid.UUID(session_id), receipt_keys([receipt]))
    return render(
        request,
        "_preview.html",
        comparison=None,
        context=wc,
        view=views.receipt_view(receipt, labels),
        at=turn,
    )


def _seq(value: str) -> int | None:
    """A message number from a form field (empty: none)."""
    value = value.strip()
    if not value:
        return None
    if not value.isdigit() or not 1 <= int(value) <= MAX_INT:
        raise ValidationError(f"at={value!r}: give the seq of a user message, or leave it empty")
    return int(value)
