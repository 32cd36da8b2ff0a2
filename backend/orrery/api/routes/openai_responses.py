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

from orrery.agents.client_tools import check_client_tools
from orrery.api.errors import SSE_CONTENT
from orrery.api.openai_params import refused, refused_response_param
from orrery.api.openai_schemas import (
    OPENAI_ERROR_RESPONSES,
    OPENAI_RATE_LIMITED,
    OpenAIError,
    openai_error,
    remember_for_store,
)
from orrery.api.openai_sessions import session_for
from orrery.api.openai_tools import client_tools, turn_events
from orrery.api.responses_schemas import ResponseDraft, ResponsesRequest, response_id, session_of
from orrery.api.responses_tools import call_events, results_of, with_calls
from orrery.api.routes.openai_compat import chain, failed_turn, model_ids, unknown_model
from orrery.db.engine import Database
from orrery.errors import NotFoundError
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
    if body.model not in model_ids():
        return unknown_model(body.model)
    if (param := refused_response_param(body)) is not None:  # never silently ignored
        return refused(param)
    users = [m.text() for m in body.messages() if m.role == "user"]
    results = results_of(body.input) if isinstance(body.input, list) else {}
    agent = body.model.removeprefix("orrery/") if body.model != "orrery" else None
    client = client_tools(body.tools, body.tool_choice, results)
    if client is not None:
        check_client_tools(client, agent)  # a clash is refused before any session is made
    if results and not users:  # only the results, after `previous_response_id`
        users = [""]
    elif not users or not users[-1].strip():
        return _no_user_message()
    try:
        sid = await _session(request.app.state.db, user.id, x_orrery_session, body, users[0])
    except NotFoundError as exc:
        param = "X-Orrery-Session" if x_orrery_session else "previous_response_id"
        return openai_error(404, str(exc), type_="invalid_request_error", code="not_found", param=param)
    orchestrator = request.app.state.orchestrator
    events = await turn_events(orchestrator, user.id, sid, users[-1], agent, idempotency_key, client)
    first = await anext(events)  # refusals surface as HTTP errors before anything streams
    draft = ResponseDraft(response_id(sid), body.model, body.store, body.previous_response_id)
    headers = {"X-Orrery-Session": str(sid)}
    if body.stream:
        return StreamingResponse(
            _stream(draft, chain(first, events)), media_type="text/event-stream", headers=headers
        )
    done = [first, *[e async for e in events]][-1]
    if done.type == "error":
        return failed_turn(done.data, headers, request.app.state.settings.retry_after_seconds)
    draft.model = done.data.get("model") or draft.model  # the model that answered, also on a replay
    answer = with_calls(draft.body("completed", done.data["reply"], done.data["usage"]), done.data)
    return JSONResponse(answer, headers=headers)


def _no_user_message() -> JSONResponse:
    message = "input has no user message with text"
    return openai_error(400, message, type_="invalid_request_error", code="invalid_value", param="input")


async def _session(
    db: Database, user_id: uuid.UUID, header: str | None, body: ResponsesRequest, first: str
) -> uuid.UUID:
    """`X-Orrery-Session`, else the session `previous_response_id` names, else the conversation's."""
    if body.previous_response_id and not header:
        header = session_of(body.previous_response_id)
        if header is None:
            raise NotFoundError("response", body.previous_response_id)
    return await session_for(db, user_id, header, body.user, first, remember=remember_of(body))


async def _stream(draft: ResponseDraft, events: AsyncIterator[Any]) -> AsyncIterator[str]:
    """The turn's events as Responses stream events; a model failure ends in `response.failed`."""
    yield draft.event("response.created", response=draft.body("in_progress"))
    yield draft.event("response.in_progress", response=draft.body("in_progress"))
    item = {"item_id": draft.message_id, "output_index": 0}
    empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    yield draft.event("response.output_item.added", output_index=0, item=draft.message("", "in_progress", []))
    yield draft.event("response.content_part.added", **item, content_index=0, part=empty)
    text, done = "", {}
    async for event in events:
        delta = event.data["delta"] if event.type == "text" else None
        if event.type == "done":
            done = event.data
            draft.model = done.get("model") or draft.model  # `response.completed` names who answered
            delta = done["reply"] if done.get("replayed") else None  # a replay streams no text
        elif event.type == "error":
            error = {"code": "server_error", "message": event.data["message"]}
            yield draft.event("response.failed", response=draft.body("failed", error=error))
            return
        if delta:
            text += delta
            yield draft.event("response.output_text.delta", **item, content_index=0, delta=delta, logprobs=[])
    yield draft.event("response.output_text.done", **item, content_index=0, text=text, logprobs=[])
    yield draft.event("response.content_part.done", **item, content_index=0, part={**empty, "text": text})
    yield draft.event("response.output_item.done", output_index=0, item=draft.message(text))
    for call_event in call_events(draft, done.get("client_tool_calls") or []):
        yield call_event
    completed = with_calls(draft.body("completed", text, done.get("usage") or {}), done)
    yield draft.event("response.completed", response=completed)
