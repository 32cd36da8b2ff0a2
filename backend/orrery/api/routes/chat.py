"""Chat sessions and turns: create, read, change focus/agent/strategy, and run a turn as Server-Sent
Events (or JSON), with `Idempotency-Key` support; plus the session's next working context."""

from __future__ import annotations

import logging
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query, Request
from pydantic import Field, StrictBool

from orrery.api.chat_schemas import (
    AgentName,
    ComparisonOut,
    SessionOut,
    SessionWithMessages,
    TurnOut,
    WorkingContextOut,
)
from orrery.api.errors import ERROR_RESPONSES, RATE_LIMITED, SSE_CONTENT, ErrorOut
from orrery.errors import ValidationError
from orrery.repo import chat
from orrery.services import context_view, turns
from orrery.services.deps import CurrentUser, ReadSessionDep, WriteSessionDep
from orrery.services.limits import MAX_INT, Text
from orrery.services.turns import MessageIn, StrategyName
from orrery.validation import StorableBody
from orrery.vocabulary import FocusKind

log = logging.getLogger("orrery.api")
router = APIRouter(prefix="/v1/sessions", tags=["chat"], responses=ERROR_RESPONSES)


class Focus(StorableBody):
    """What the chat is about."""

    kind: FocusKind
    id: uuid.UUID


class SessionIn(StorableBody):
    """A new chat session."""

    project_id: uuid.UUID | None = None
    focus: Focus | None = None
    agent: AgentName | None = None
    scoping_strategy: StrategyName | None = None
    title: Text | None = Field(default=None, max_length=300)
    remember: StrictBool = Field(
        default=True,
        description="false: don't remember this chat (never recalled in another chat, no facts saved "
        "from it, not read by the pattern analyst); it may still read memory itself",
    )


class SessionPatch(StorableBody):
    """Changes to a session; `focus: null` clears it."""

    focus: Focus | None = None
    clear_focus: StrictBool = False
    agent: AgentName | None = None
    scoping_strategy: StrategyName | None = None
    title: Text | None = Field(default=None, max_length=300, description="a new title; empty clears it")
    remember: StrictBool | None = Field(default=None, description="remember this chat (true) or not (false)")


def _session_dict(record: Any) -> dict[str, Any]:
    return {
        "id": str(record.id),
        "project_id": str(record.project_id) if record.project_id else None,
        "focus": {"kind": record.focus_kind, "id": str(record.focus_id)} if record.focus_kind else None,
        "active_agent": record.active_agent,
        "scoping_strategy": record.scoping_strategy,
        "message_count": record.message_count,
        "title": record.title,
        "remember": record.remember,
    }


@router.post("", status_code=201, response_model=SessionOut, summary="Open a chat session")
async def create_session(body: SessionIn, user: CurrentUser, session: WriteSessionDep) -> dict[str, Any]:
    """Open a session, optionally in a project and focused on the project or one of its entities."""
    from orrery.memory.scoping import get_strategy

    if body.scoping_strategy:
        get_strategy(body.scoping_strategy)
    record = await chat.create_session(
        session,
        user.id,
        project_id=body.project_id,
        focus_kind=body.focus.kind if body.focus else None,
        focus_id=body.focus.id if body.focus else None,
        title=body.title,
        active_agent=body.agent,
        remember=body.remember,
    )
    record.scoping_strategy = body.scoping_strategy
    return _session_dict(record)


@router.get("/{session_id}", response_model=SessionWithMessages, summary="A session and its messages")
async def get_session(
    session_id: str,
    user: CurrentUser,
    session: ReadSessionDep,
    request: Request,
    after_seq: Annotated[int, Query(ge=0, le=MAX_INT)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    """The session with a page of its messages (`after_seq` to page on). A latest user message whose
    turn was cut off by a crash (no live process runs it) is marked and shown `failed`."""
    from orrery.agents.leftovers import may_be_leftover, settle_leftover

    record = await chat.get_session(session, user.id, session_id)
    messages = await chat.list_messages(session, user.id, record.id, after_seq=after_seq, limit=limit)
    failed = None
    if messages and may_be_leftover(messages[-1], record.message_count):
        orchestrator = request.app.state.orchestrator
        if await settle_leftover(orchestrator.db, orchestrator.locks, record.id, messages[-1]):
            failed = messages[-1].seq
    return {
        **_session_dict(record),
        "messages": [
            {
                "seq": m.seq,
                "role": m.role,
                "content": m.content,
                "agent": m.agent_id,
                "tool_calls": m.tool_calls,
                "status": "failed" if m.seq == failed else m.status,
                "model": m.model,
                "created_at": m.created_at.isoformat(),
            }
            for m in messages
        ],
    }


@router.patch(
    "/{session_id}",
    response_model=SessionOut,
    summary="Rename, remember or not, or change focus, agent or scoping strategy",
)
async def patch_session(
    session_id: str, body: SessionPatch, user: CurrentUser, session: WriteSessionDep
) -> dict[str, Any]:
    """Switch what the chat is about, who answers next, how history is scoped, or whether it is
    remembered (`remember: false` takes it out of recall in other chats from their next turn)."""
    from orrery.memory.scoping import get_strategy
    from orrery.repo.sessions import rename_session, set_remember
    from orrery.roster import get_agent

    record = await chat.get_session(session, user.id, session_id)
    if body.title is not None:
        await rename_session(session, user.id, record.id, body.title)
    if body.remember is not None:
        await set_remember(session, user.id, record.id, body.remember)
    if body.scoping_strategy:
        record.scoping_strategy = get_strategy(body.scoping_strategy).name
    if body.agent and body.agent != record.active_agent:
        await chat.record_transition(
            session, user.id, record.id, get_agent(body.agent).id, "changed by the client"
        )
    if body.clear_focus:
        record.focus_kind, record.focus_id = None, None
    elif body.focus:
        if record.project_id is None:
            raise ValidationError("a focused session needs a project")
        await chat.check_focus(session, user.id, record.project_id, body.focus.kind, body.focus.id)
        record.focus_kind, record.focus_id = body.focus.kind, body.focus.id
    return _session_dict(record)


@router.post(
    "/{session_id}/messages",
    summary="Send a message and run a turn (SSE or JSON)",
    response_model=TurnOut,
    responses={
        200: {
            "content": {"text/event-stream": SSE_CONTENT},
            "description": "SSE events, or the turn as JSON",
        },
        502: {
            "model": ErrorOut,
            "description": "The model failed (JSON turns, code `model_error` or `model_timeout` as the "
            "stream's `error` event; streams send that event)",
        },
        409: {"model": ErrorOut, "description": "Idempotency-Key reused with a different request"},
        **RATE_LIMITED,
    },
)
async def post_message(
    session_id: str,
    body: MessageIn,
    request: Request,
    user: CurrentUser,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
    accept: Annotated[str | None, Header()] = None,
    context: Annotated[
        turns.ContextDetail,
        Query(
            description="What the `context` event carries: the prompt's `digest` (default) or `full` text."
        ),
    ] = "digest",
) -> Any:
    """Streams `agent`, `context`, `text`, `tool_call`, `tool_result`, `done` (or `error`) events;
    the `context` event has the receipt and a digest of the prompt (`?context=full`: its text too);
    with `Accept: application/json` returns the finished turn instead (a failed turn: 502, or 503 with
    `Retry-After` when the database is unavailable). A repeated `Idempotency-Key` returns the original
    turn; the same key with a different body is a 409."""
    return await turns.run_turn(
        request.app.state.orchestrator,
        user.id,
        session_id,
        body,
        idempotency_key=idempotency_key,
        accept=accept,
        context=context,
    )


@router.post(
    "/{session_id}/messages/{seq}/edit",
    summary="Edit the last user message and run the turn again (SSE or JSON)",
    response_model=TurnOut,
    responses={
        200: {"content": {"text/event-stream": SSE_CONTENT}, "description": "SSE events, or the turn"},
        409: {"model": ErrorOut, "description": "Idempotency-Key reused with a different request"},
        **RATE_LIMITED,
    },
)
async def edit_message(
    session_id: str,
    seq: Annotated[int, Path(ge=1, le=MAX_INT)],
    body: MessageIn,
    request: Request,
    user: CurrentUser,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
    accept: Annotated[str | None, Header()] = None,
    context: Annotated[
        turns.ContextDetail,
        Query(
            description="What the `context` event carries: the prompt's `digest` (default) or `full` text."
        ),
    ] = "digest",
) -> Any:
    """Replace the session's latest user message (`seq`) with `content`: the old message and its
    reply stay stored, marked superseded, and are neither listed nor sent to the model again; then
    the turn runs as `POST /messages` does (same events, same `Idempotency-Key` rules)."""
    return await turns.edit_and_rerun(
        request.app.state.orchestrator,
        user.id,
        session_id,
        seq,
        body,
        idempotency_key=idempotency_key,
        accept=accept,
        context=context,
    )


@router.get(
    "/{session_id}/context",
    response_model=WorkingContextOut | ComparisonOut,
    summary="The working context the model would see next (or a preview, or a comparison)",
)
async def next_context(
    session_id: str,
    request: Request,
    user: CurrentUser,
    session: ReadSessionDep,
    scoping: Annotated[
        str | None, Query(max_length=64, description="Preview with this scoping strategy.")
    ] = None,
    compare: Annotated[
        str | None,
        Query(max_length=400, description="Compare scoping strategies, comma-separated: `last_n,relevance`."),
    ] = None,
    at: Annotated[
        int | None,
        Query(ge=1, le=MAX_INT, description="The view the turn answering this user message (seq) had."),
    ] = None,
) -> dict[str, Any]:
    """System prompt, scoped messages and the receipt, assembled exactly as for the next turn.
    `scoping` previews another strategy and `at` a past turn's view; `compare` returns the
    strategies side by side instead. Previews and comparisons store nothing."""
    return await context_view.next_context(
        session, request.app.state.orchestrator, user.id, session_id, scoping=scoping, compare=compare, at=at
    )
