"""The OpenAI Responses API: `POST /v1/responses`, so clients built on it (the Agents SDK's default
`OpenAIResponsesModel`, `client.responses.create/stream`) run against Orrery.

As on chat completions, `model` names an agent and the conversation lives on the server: the turn is
the last user message of `input` (a text, or a list of messages), on the session
`previous_response_id` names (response ids carry their session), or `X-Orrery-Session`, or the one
derived from the conversation's first user message. `instructions`, system messages and sampling
settings are ignored (Orrery assembles the context); the caller's function `tools` are served
(`function_call` items suspend the turn, `function_call_output` items resume it: `api.openai_tools`);
a `text.format` that asks for something is refused with a 400 naming it. `store: false` starts a
chat that is not remembered across chats. `Idempotency-Key`, resends and errors behave as on
`/v1/chat/completions`. Streams carry the Responses events (`response.created` ...
`response.completed`, or `response.failed`). The completed response's `model` names the model that
answered, as on chat completions.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.agents.client_tools import check_client_tools
from orrery.agents.turn_store import BeforeStore
from orrery.api.errors import SSE_CONTENT
from orrery.api.openai_caller import BadFormat, responses_caller
from orrery.api.openai_schemas import (
    OPENAI_ERROR_RESPONSES,
    OPENAI_RATE_LIMITED,
    STREAM_HEADERS,
    OpenAIError,
    openai_error,
    remember_for_store,
)
from orrery.api.openai_sessions import session_for
from orrery.api.openai_tools import client_tools, turn_events
from orrery.api.responses_schemas import (
    ResponseDraft,
    ResponsesRequest,
    finished_status,
    reply_of,
    response_id,
    session_of,
    tool_item,
)
from orrery.api.responses_tools import call_events, results_of, with_calls
from orrery.api.routes.openai_compat import (
    agent_of,
    bad_format,
    canonical_model,
    chain,
    failed_turn,
    unknown_model,
)
from orrery.db.engine import Database
from orrery.errors import NotFoundError
from orrery.repo.branches import branch_after
from orrery.services.deps import CurrentUser

router = APIRouter(prefix="/v1", tags=["openai-compatible"], responses=OPENAI_ERROR_RESPONSES)


def remember_of(body: ResponsesRequest) -> bool:
    """`store: false` is a chat not remembered across chats (`ChatSession.remember`), as on chat
    completions."""
    return remember_for_store(body.store)


@router.post(
    "/responses",
    summary="OpenAI Responses API (one server-side session per conversation)",
    responses={
        200: {
            "content": {"text/event-stream": SSE_CONTENT},
            "description": "A response, or events when `stream`",
        },
        404: {"model": OpenAIError, "description": "Unknown model, session or `previous_response_id`"},
        502: {"model": OpenAIError, "description": "The model failed (`model_error`)"},
        **OPENAI_RATE_LIMITED,
    },
)
async def create_response(
    body: ResponsesRequest,
    request: Request,
    user: CurrentUser,
    x_orrery_session: Annotated[str | None, Header(max_length=100)] = None,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> Any:
    """Runs one turn on the server-side session and answers as a `response` (or its events)."""
    checked = _checked(body, request.app.state.settings)
    if isinstance(checked, JSONResponse):
        return checked
    model, caller, users, results = checked
    agent = agent_of(model)
    client = client_tools(body.tools, body.tool_choice, results)
    if client is not None:
        check_client_tools(client, agent)  # a clash is refused before any session is made
    try:
        sid = await _session(request.app.state.db, user.id, x_orrery_session, body, users[0])
    except NotFoundError as exc:
        param = "X-Orrery-Session" if x_orrery_session else "previous_response_id"
        return openai_error(404, str(exc), type_="invalid_request_error", code="not_found", param=param)
    reply_id = uuid.uuid4()  # the new response's id names it
    events = await turn_events(
        request.app.state.orchestrator,
        user.id,
        sid,
        users[-1],
        agent,
        idempotency_key,
        client,
        caller=caller,
        reply_id=reply_id,
        before_store=_branch(user.id, sid, body.previous_response_id),
    )
    first = await anext(events)  # refusals surface as HTTP errors before anything streams
    draft = ResponseDraft(response_id(sid, reply_id), body.model, body.store, body.previous_response_id)
    headers = {"X-Orrery-Session": str(sid)}
    if body.stream:
        return StreamingResponse(
            _stream(draft, chain(first, events)),
            media_type="text/event-stream",
            headers=headers | STREAM_HEADERS,
        )
    done = [first, *[e async for e in events]][-1]
    if done.type == "error":
        return failed_turn(done.data, headers, request.app.state.settings.retry_after_seconds)
    return JSONResponse(_answer(draft, done.data), headers=headers)


def _answer(draft: ResponseDraft, data: dict[str, Any]) -> dict[str, Any]:
    """A finished turn as the response: server-run tools as `mcp_call` items, the reply, and the
    caller's pending calls as `function_call` items."""
    draft.model = data.get("model") or draft.model  # the model that answered, also on a replay
    tools = [tool_item(c) for c in data.get("tool_calls") or []]
    return with_calls(draft.body(finished_status(data), data["reply"], data["usage"], tools=tools), data)


def _no_user_message() -> JSONResponse:
    message = "input has no user message with text"
    return openai_error(400, message, type_="invalid_request_error", code="invalid_value", param="input")


def _branch(user_id: uuid.UUID, sid: uuid.UUID, previous: str | None) -> BeforeStore | None:
    """With `previous_response_id` naming an earlier reply, the turn continues from it: what came
    after it is dropped in the new message's own transaction (OpenAI's branching)."""
    reply = reply_of(previous) if previous else None
    if reply is None:
        return None

    async def branch(s: AsyncSession) -> int:
        return await branch_after(s, user_id, sid, reply)

    return branch


def _checked(
    body: ResponsesRequest, settings: Any
) -> JSONResponse | tuple[str, Any, list[str], dict[str, str]]:
    """The request's refusal, else its listed model id, caller options, user messages' texts and the
    caller's tool results (only results, after `previous_response_id`: the turn they resume)."""
    model = canonical_model(body.model)
    if model is None:
        return unknown_model(body.model)
    try:
        caller = responses_caller(body, settings)
    except BadFormat as exc:
        return bad_format(exc)
    users = [m.text() for m in body.messages() if m.role == "user"]
    results = results_of(body.input) if isinstance(body.input, list) else {}
    if results and not users:
        users = [""]
    elif not users or not users[-1].strip():
        return _no_user_message()
    return model, caller, users, results


async def _session(
    db: Database, user_id: uuid.UUID, header: str | None, body: ResponsesRequest, first: str
) -> uuid.UUID:
    """`X-Orrery-Session`, else the session `previous_response_id` names, else the conversation's."""
    if body.previous_response_id and not header:
        named = session_of(body.previous_response_id)
        try:
            if named is None:
                raise NotFoundError("session", body.previous_response_id)
            return await session_for(db, user_id, named, body.user, first, remember=remember_of(body))
        except NotFoundError:  # named as the caller knows it, never as an internal session
            raise NotFoundError("response", body.previous_response_id) from None
    return await session_for(db, user_id, header, body.user, first, remember=remember_of(body))


async def _stream(draft: ResponseDraft, events: AsyncIterator[Any]) -> AsyncIterator[str]:
    """The turn's events as Responses stream events: each server-run tool call an `mcp_call` item
    when its result is in, the message item opened at its first text; a model failure ends in
    `response.failed` (with the JSON answer's code), a reply cut by the token limit in
    `response.incomplete`."""
    yield draft.event("response.created", response=draft.body("in_progress"))
    yield draft.event("response.in_progress", response=draft.body("in_progress"))
    tools: list[dict[str, Any]] = []
    calls: dict[Any, dict[str, Any]] = {}
    text, done, opened = "", {}, False
    async for event in events:
        delta = event.data["delta"] if event.type == "text" else None
        if event.type == "tool_call":
            calls[event.data.get("id")] = dict(event.data)
        elif event.type == "tool_result" and not opened:
            call = calls.get(event.data.get("id")) or {
                "id": event.data.get("id"),
                "name": event.data.get("name"),
            }
            tools.append(
                tool_item({**call, "result": event.data.get("content"), "error": event.data.get("error")})
            )
            for kind in ("response.output_item.added", "response.output_item.done"):
                yield draft.event(kind, output_index=len(tools) - 1, item=tools[-1])
        elif event.type == "done":
            done = event.data
            draft.model = done.get("model") or draft.model  # the final event names who answered
            delta = done["reply"] if done.get("replayed") else None  # a replay streams no text
        elif event.type == "error":
            error = {"code": event.data.get("code") or "model_error", "message": event.data["message"]}
            yield draft.event("response.failed", response=draft.body("failed", error=error, tools=tools))
            return
        if delta:
            if not opened:
                opened = True
                for opening in _open_message(draft, len(tools)):
                    yield opening
            text += delta
            item = {"item_id": draft.message_id, "output_index": len(tools)}
            yield draft.event("response.output_text.delta", **item, content_index=0, delta=delta, logprobs=[])
    waiting = done.get("client_tool_calls") or []
    if not opened and not waiting:
        for opening in _open_message(draft, len(tools)):
            yield opening
        opened = True
    if opened:
        for closing in _close_message(draft, len(tools), text):
            yield closing
    for call_event in call_events(draft, waiting, start=len(tools) + int(opened)):
        yield call_event
    status = finished_status(done)
    final = with_calls(draft.body(status, text, done.get("usage") or {}, tools=tools), done)
    yield draft.event(f"response.{status}", response=final)


def _open_message(draft: ResponseDraft, index: int) -> list[str]:
    item = {"item_id": draft.message_id, "output_index": index}
    return [
        draft.event(
            "response.output_item.added", output_index=index, item=draft.message("", "in_progress", [])
        ),
        draft.event("response.content_part.added", **item, content_index=0, part=_EMPTY),
    ]


def _close_message(draft: ResponseDraft, index: int, text: str) -> list[str]:
    item = {"item_id": draft.message_id, "output_index": index}
    return [
        draft.event("response.output_text.done", **item, content_index=0, text=text, logprobs=[]),
        draft.event("response.content_part.done", **item, content_index=0, part={**_EMPTY, "text": text}),
        draft.event("response.output_item.done", output_index=index, item=draft.message(text)),
    ]


_EMPTY = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
